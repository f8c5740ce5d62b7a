package mpmc

import (
	"runtime"
	"sync"
	"testing"
	"weak"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/allocs"
)

func TestSegQueueIsFIFOAcrossManyBlocks(t *testing.T) {
	q := newSegQueue[int]()
	next, want := 0, 0
	// Grow and shrink through block boundaries at different offsets.
	for _, n := range []int{1, segBlockCap - 1, segBlockCap, segBlockCap + 1, 5 * segBlockCap, 3, 1000} {
		for range n {
			require.True(t, q.TryPush(next))
			next++
			require.Equal(t, next-want, q.Len())
		}
		for range n / 2 {
			v, ok := q.TryPop()
			require.True(t, ok)
			require.Equal(t, want, v)
			want++
			require.Equal(t, next-want, q.Len())
		}
	}
	for want < next {
		v, ok := q.TryPop()
		require.True(t, ok)
		require.Equal(t, want, v)
		want++
	}
	_, ok := q.TryPop()
	require.False(t, ok)
	require.Equal(t, 0, q.Len())
}

func TestSegQueueReusesItsBlocks(t *testing.T) {
	q := newSegQueue[uint64]()
	cycle := func() {
		for i := range 4 * segBlockCap {
			q.TryPush(uint64(i))
		}
		for range 4 * segBlockCap {
			q.TryPop()
		}
	}
	cycle() // fill the spares
	// Per value pushed and popped, over 20 cycles.
	perValue := allocs.PerCall(20, cycle) / (4 * segBlockCap)
	require.Zero(t, perValue, "a queue that swings by a few blocks allocates nothing in steady state")

	// Ping-pong through many blocks allocates nothing either.
	i := uint64(0)
	require.Zero(t, allocs.PerCall(50*segBlockCap, func() {
		q.TryPush(i)
		q.TryPop()
		i++
	}))
}

func TestSegQueueKeepsAtMost64KiBOfSpares(t *testing.T) {
	require.Equal(t, segSpares, newSegQueue[uint64]().numSpares)
	require.Equal(t, 1, newSegQueue[[1024]byte]().numSpares)
}

func TestSegQueueGrowsBeyondItsSpares(t *testing.T) {
	q := newSegQueue[int]()
	const n = (segSpares + 5) * segBlockCap
	for range 3 {
		for i := range n {
			require.True(t, q.TryPush(i))
		}
		require.Equal(t, n, q.Len())
		for i := range n {
			v, ok := q.TryPop()
			require.True(t, ok)
			require.Equal(t, i, v)
		}
	}
}

// Popped values are not kept reachable by the queue.
func TestSegQueueReleasesItsValues(t *testing.T) {
	q := newSegQueue[*[64]byte]()
	var refs []weak.Pointer[[64]byte]
	for range 3 * segBlockCap {
		p := new([64]byte)
		refs = append(refs, weak.Make(p))
		q.TryPush(p)
	}
	for range 3 * segBlockCap {
		_, ok := q.TryPop()
		require.True(t, ok)
	}
	runtime.GC()
	runtime.GC()
	for i, r := range refs {
		require.Nil(t, r.Value(), "value %d is still reachable", i)
	}
	runtime.KeepAlive(q)
}

func TestSegQueueClose(t *testing.T) {
	q := newSegQueue[int]()
	require.True(t, q.TryPush(1))
	require.True(t, q.Close())
	require.False(t, q.Close())
	require.True(t, q.IsClosed())
	require.False(t, q.TryPush(2))
	require.Equal(t, 1, q.Len())
	v, ok := q.TryPop()
	require.True(t, ok)
	require.Equal(t, 1, v)
	_, ok = q.TryPop()
	require.False(t, ok)
}

// Producers and consumers racing through block boundaries, block reuse
// included: every value once, each producer's values in order per consumer.
func TestSegQueueManyProducersAndConsumers(t *testing.T) {
	const producers, consumers, per = 4, 4, 20_000
	q := newSegQueue[uint64]()
	got := make([][]uint64, consumers)
	var wg sync.WaitGroup
	var done sync.WaitGroup
	done.Add(producers)
	for p := range producers {
		wg.Go(func() {
			defer done.Done()
			for i := range per {
				q.TryPush(uint64(p)<<32 | uint64(i))
				if i%64 == 0 {
					runtime.Gosched()
				}
			}
		})
	}
	finished := make(chan struct{})
	go func() { done.Wait(); close(finished) }()
	for c := range consumers {
		wg.Go(func() {
			for {
				v, ok := q.TryPop()
				if ok {
					got[c] = append(got[c], v)
					continue
				}
				select {
				case <-finished:
					if v, ok := q.TryPop(); ok {
						got[c] = append(got[c], v)
						continue
					}
					return
				default:
					runtime.Gosched()
				}
			}
		})
	}
	wg.Wait()
	seen := make([]int, producers*per)
	for c := range got {
		last := make([]int, producers)
		for i := range last {
			last[i] = -1
		}
		for _, v := range got[c] {
			p, i := int(v>>32), int(uint32(v))
			require.Greater(t, i, last[p], "consumer %d saw producer %d out of order", c, p)
			last[p] = i
			seen[p*per+i]++
		}
	}
	for i, n := range seen {
		require.Equal(t, 1, n, "value %d seen %d times", i, n)
	}
}
