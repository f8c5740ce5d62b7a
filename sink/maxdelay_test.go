package sink_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/vyukov"
	"github.com/shardedsink/shardedsink/sink"
)

// batchLog is an Action that records the size and the time of every Drain
// call.
type batchLog struct {
	mu    sync.Mutex
	sizes []int
	times []time.Time
	total int
}

func (l *batchLog) Drain(_ context.Context, batch []ev) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sizes = append(l.sizes, len(batch))
	l.times = append(l.times, time.Now())
	l.total += len(batch)
}

func (l *batchLog) snapshot() (sizes []int, total int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int(nil), l.sizes...), l.total
}

// trickle pushes one value every gap for d, through one handle, and returns
// how many it pushed.
func trickle(s *sink.Sink[ev], gap, d time.Duration) int {
	h := s.Handle()
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); n++ {
		if !h.Push(ev{n}) {
			panic("a trickle push was refused")
		}
		time.Sleep(gap)
	}
	return n
}

// A trickle of 1,000 values a second with MaxDelay 100 ms gives about ten
// Drain calls a second of about 100 values each, where MaxDelay 0 gives one
// call per value.
func TestMaxDelayBatchesATrickle(t *testing.T) {
	for _, mode := range []sink.IdleMode{sink.IdleWake, sink.IdlePoll} {
		t.Run(mode.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := &batchLog{}
				cfg := sink.Config[ev]{Shards: 1, MaxDelay: 100 * time.Millisecond, Idle: mode}
				s, err := sink.New(cfg, l)
				require.NoError(t, err)
				n := trickle(s, time.Millisecond, time.Second)
				require.Equal(t, 1000, n)
				require.NoError(t, s.Shutdown(context.Background()))
				sizes, total := l.snapshot()
				require.Equal(t, n, total)
				require.InDelta(t, 10, len(sizes), 1, "Drain calls: %v", sizes)
				for i, sz := range sizes[:len(sizes)-1] {
					// The timer and the producer's sleep can end at the same
					// instant: the batch holds 100 or 101 values.
					require.InDelta(t, 100, sz, 1, "batch %d of %v", i, sizes)
				}
			})
		})
	}

	t.Run("zero MaxDelay drains every value at once", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := &batchLog{}
			s, err := sink.New(sink.Config[ev]{Shards: 1}, l)
			require.NoError(t, err)
			n := trickle(s, time.Millisecond, 100*time.Millisecond)
			require.NoError(t, s.Shutdown(context.Background()))
			sizes, total := l.snapshot()
			require.Equal(t, n, total)
			require.Len(t, sizes, n, "one Drain call per value")
		})
	})
}

// A batch that fills goes to Drain at once, however long MaxDelay is.
func TestMaxDelayDrainsFullBatchesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &batchLog{}
		s, err := sink.New(sink.Config[ev]{Shards: 1, BatchSize: 16, MaxDelay: time.Hour}, l)
		require.NoError(t, err)
		start := time.Now()
		h := s.Handle()
		for i := range 64 {
			require.True(t, h.Push(ev{i}))
		}
		synctest.Wait()
		sizes, _ := l.snapshot()
		require.Equal(t, []int{16, 16, 16, 16}, sizes)
		require.Zero(t, time.Since(start), "no time passed")
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

// Each batch is drained MaxDelay after the worker took its first value.
func TestMaxDelayCountsFromTheBatchsFirstValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &batchLog{}
		s, err := sink.New(sink.Config[ev]{Shards: 1, MaxDelay: 50 * time.Millisecond}, l)
		require.NoError(t, err)
		h := s.Handle()
		time.Sleep(time.Second) // idle first: the clock starts with a value, not with New
		start := time.Now()
		require.True(t, h.Push(ev{0}))
		time.Sleep(30 * time.Millisecond)
		require.True(t, h.Push(ev{1}))
		synctest.Wait()
		sizes, _ := l.snapshot()
		require.Empty(t, sizes, "30 ms in, the batch is held")
		time.Sleep(time.Second)
		sizes, _ = l.snapshot()
		require.Equal(t, []int{2}, sizes)
		l.mu.Lock()
		require.Equal(t, 50*time.Millisecond, l.times[0].Sub(start))
		l.mu.Unlock()
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

// Flush and Shutdown do not wait for MaxDelay.
func TestMaxDelayFlushAndShutdownDoNotWait(t *testing.T) {
	for _, mode := range []sink.IdleMode{sink.IdleWake, sink.IdlePoll} {
		t.Run(mode.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := &batchLog{}
				s, err := sink.New(sink.Config[ev]{Shards: 2, MaxDelay: time.Hour, Idle: mode, IdleSleep: time.Hour}, l)
				require.NoError(t, err)
				for i := range 3 {
					require.True(t, s.Handle().Push(ev{i}))
				}
				synctest.Wait() // the workers hold their batches
				sizes, _ := l.snapshot()
				require.Empty(t, sizes)
				start := time.Now()
				require.NoError(t, s.Flush(context.Background()))
				_, total := l.snapshot()
				require.Equal(t, 3, total)
				require.Less(t, time.Since(start), 10*time.Millisecond, "Flush waited for MaxDelay")

				for i := range 5 {
					require.True(t, s.Handle().Push(ev{10 + i}))
				}
				synctest.Wait()
				start = time.Now()
				require.NoError(t, s.Shutdown(context.Background()))
				require.Zero(t, time.Since(start), "Shutdown waited")
				_, total = l.snapshot()
				require.Equal(t, 8, total)
			})
		})
	}
}

// A worker holding a short batch tops it up by stealing: a value pushed
// into its own ring wakes it, and its round takes from the other shard too.
func TestMaxDelayStealingTopsUpAHeldBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &batchLog{}
		rings := &capturing{}
		s, err := sink.New(sink.Config[ev]{Shards: 2, BatchSize: 8, MaxDelay: time.Hour, Ring: rings.factory}, l)
		require.NoError(t, err)
		synctest.Wait() // both workers parked, so that only shard 0's takes ev 0
		h0 := s.HandleFor(0)
		require.True(t, h0.Push(ev{0}))
		synctest.Wait() // shard 0's worker holds one value; shard 1's is parked
		other := rings.rings[1-h0.Shard()]
		for i := range 6 {
			require.True(t, other.TryPush(ev{1 + i})) // behind the sink's back: no doorbell
		}
		require.True(t, h0.Push(ev{7}))
		synctest.Wait()
		sizes, _ := l.snapshot()
		require.Equal(t, []int{8}, sizes, "1 + 1 own values and 6 stolen fill the batch")
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

// popCounting wraps a ring and counts its TryPop calls: each round of a
// worker looks at its ring with at least one.
type popCounting struct {
	ring.Ring[ev]
	pops *atomic.Int64
}

func (r popCounting) TryPop() (ev, bool) {
	r.pops.Add(1)
	return r.Ring.TryPop()
}

// An idle sink with MaxDelay set stays parked: once the held batch is
// drained, the worker looks at its ring again only for the IdleWake safety
// net, not on MaxDelay's clock.
func TestMaxDelayIdleSinkStaysParked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var pops atomic.Int64
		l := &batchLog{}
		cfg := sink.Config[ev]{
			Shards:    1,
			MaxDelay:  time.Millisecond,
			IdleSleep: time.Hour,
			Ring:      func(c int) ring.Ring[ev] { return popCounting{vyukov.New[ev](c), &pops} },
		}
		s, err := sink.New(cfg, l)
		require.NoError(t, err)
		require.True(t, s.Push(ev{1}))
		time.Sleep(time.Second)
		sizes, _ := l.snapshot()
		require.Equal(t, []int{1}, sizes)
		before := pops.Load()
		time.Sleep(24 * time.Hour)
		// 24 hourly rechecks of a few rounds each; a worker polling on
		// MaxDelay's clock would have looked 86 million times.
		require.Less(t, pops.Load()-before, int64(24*20))
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

func TestNewRejectsBadMaxDelayAndOverflow(t *testing.T) {
	_, err := sink.New(sink.Config[ev]{MaxDelay: -time.Millisecond}, nop[ev]())
	require.ErrorIs(t, err, sink.ErrInvalidConfig)
	require.ErrorContains(t, err, "MaxDelay = -1ms")
	_, err = sink.New(sink.Config[ev]{Overflow: sink.Overflow(7)}, nop[ev]())
	require.ErrorIs(t, err, sink.ErrInvalidConfig)
	require.ErrorContains(t, err, "Overflow = Overflow(7)")
}
