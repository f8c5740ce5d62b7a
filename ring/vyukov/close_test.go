package vyukov_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/ring/vyukov"
)

func TestAClosedRingRefusesPushesAndStillHandsOutItsValues(t *testing.T) {
	for _, capacity := range []int{1, 2, 3, 8} {
		r := vyukov.New[int](capacity)
		for lap := range 3 { // start the close at several offsets
			for i := range capacity - 1 {
				require.True(t, r.TryPush(lap*100+i))
			}
			for range capacity - 1 {
				_, ok := r.TryPop()
				require.True(t, ok)
			}
		}
		require.True(t, r.TryPush(1))
		require.False(t, r.IsClosed())
		require.True(t, r.Close())
		require.False(t, r.Close(), "the second Close reports false")
		require.True(t, r.IsClosed())
		require.False(t, r.TryPush(2), "capacity %d: a closed ring refuses pushes", capacity)
		require.Equal(t, 1, r.Len())
		v, ok := r.TryPop()
		require.True(t, ok)
		require.Equal(t, 1, v)
		_, ok = r.TryPop()
		require.False(t, ok)
		require.Equal(t, 0, r.Len())
		require.False(t, r.TryPush(3), "room does not reopen a closed ring")
	}
}

// Pushes racing a Close either land before it, and are popped afterwards,
// or fail: after Close returns no push succeeds, and the ring then holds
// exactly the values whose pushes succeeded.
func TestPushesRacingCloseLandBeforeItOrFail(t *testing.T) {
	for round := range 300 {
		r := vyukov.New[int](64)
		var accepted atomic.Int64
		var closed atomic.Bool
		var wg sync.WaitGroup
		for p := range 4 {
			wg.Go(func() {
				for i := range 40 {
					wasClosed := closed.Load()
					if r.TryPush(p*1000 + i) {
						if wasClosed {
							t.Errorf("round %d: a push that began after Close returned succeeded", round)
						}
						accepted.Add(1)
					}
				}
			})
		}
		wg.Go(func() {
			if !r.Close() {
				t.Errorf("round %d: the first Close reported false", round)
			}
			closed.Store(true)
		})
		wg.Wait()
		n := 0
		for {
			if _, ok := r.TryPop(); !ok {
				break
			}
			n++
		}
		require.Equal(t, int(accepted.Load()), n, "round %d", round)
	}
}
