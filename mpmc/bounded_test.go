package mpmc

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/ring/vyukov"
)

// A push either lands before the close, and is popped, or fails: no push
// that starts after the close succeeds, and the pops after the close find
// exactly the values that landed.
func TestPushesRacingACloseEitherLandBeforeItOrFail(t *testing.T) {
	for round := range 200 {
		for _, q := range []queue[int]{vyukov.New[int](4), newSegQueue[int](), &guardedRing[int]{Ring: vyukov.New[int](4)}} {
			var pushed atomic.Int64
			var wg sync.WaitGroup
			for p := range 3 {
				wg.Go(func() {
					for i := range 50 {
						closedBefore := q.IsClosed()
						ok := q.TryPush(p*1000 + i)
						if closedBefore && ok {
							t.Errorf("%T: a push that started after the close succeeded", q)
						}
						if ok {
							pushed.Add(1)
						} else if q.IsClosed() {
							return
						} else if _, ok := q.TryPop(); ok { // full: make room, count it as taken
							pushed.Add(-1)
						}
					}
				})
			}
			if round%2 == 0 {
				wg.Go(func() { q.Close() })
			} else {
				q.Close()
			}
			wg.Wait()
			q.Close()
			popped := int64(0)
			for {
				if _, ok := q.TryPop(); !ok {
					break
				}
				popped++
			}
			require.Equal(t, pushed.Load(), popped, "round %d, %T", round, q)
			require.False(t, q.TryPush(-1))
		}
	}
}

func TestAGuardedRingWaitsForThePushesInFlight(t *testing.T) {
	g := &guardedRing[int]{Ring: vyukov.New[int](2)}
	require.True(t, g.TryPush(1))
	require.False(t, g.IsClosed())
	require.True(t, g.Close())
	require.False(t, g.Close())
	require.True(t, g.IsClosed())
	require.False(t, g.TryPush(2))
	require.Equal(t, int64(1), atomic.LoadInt64(&g.state), "no push left in flight, the mark set")
	v, ok := g.TryPop()
	require.True(t, ok)
	require.Equal(t, 1, v)
}

// A push retried on a closed guarded ring leaves the guard word alone: it
// loads the closed mark before it adds to the count, so goroutines that keep
// retrying TrySend on a closed channel cannot keep a Close (which waits for
// the count to reach zero) waiting. An observer that loads the word while a
// goroutine retries must only ever see the bare mark.
func TestPushesAfterCloseLeaveTheGuardAlone(t *testing.T) {
	g := &guardedRing[int]{Ring: vyukov.New[int](2)}
	require.True(t, g.Close())
	stop := make(chan struct{})
	started := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		close(started)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for range 100 {
				if g.TryPush(1) {
					t.Error("a push succeeded on a closed ring")
					return
				}
			}
		}
	})
	<-started
	seen := int64(1)
	for range 2_000_000 {
		if s := atomic.LoadInt64(&g.state); s != 1 {
			seen = s
			break
		}
	}
	close(stop)
	wg.Wait()
	require.Equal(t, int64(1), seen, "a push after the close changed the guard word")
}
