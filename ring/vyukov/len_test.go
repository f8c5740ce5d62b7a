package vyukov

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// ForcePush on a full ring moves head past the oldest value, then tail past
// the new one. Between the two moves the cursors count one value less than
// the ring holds; Len must still count the ring full, so that a channel kept
// full by ForceSend is never seen empty (capacity 1) and the sink's
// Stats().Queued is not one short.
func TestLenCountsAForcePushBetweenItsTwoMovesAsFull(t *testing.T) {
	for _, capacity := range []int{1, 2, 4, 5} {
		r := New[int](capacity)
		for i := range capacity {
			require.True(t, r.TryPush(i))
		}
		// Displace the first lap's values and then some, so that the
		// window is checked on every slot and across a lap.
		for i := range 3 * capacity {
			// ForcePush's first move, as it makes it: head past the oldest.
			tail := atomic.LoadUint64(&r.tail)
			head := tail - r.oneLap
			require.True(t, atomic.CompareAndSwapUint64(&r.head, head, r.next(head)))
			require.Equal(t, capacity, r.Len(), "capacity %d, push %d: between ForcePush's moves of head and tail", capacity, i)
			// Its second move and the publish.
			s := &r.slots[tail&(r.markBit-1)]
			require.True(t, atomic.CompareAndSwapUint64(&r.tail, tail, r.next(tail)))
			s.value = capacity + i
			atomic.StoreUint64(&s.stamp, tail+1)
			require.Equal(t, capacity, r.Len(), "capacity %d, push %d: after ForcePush", capacity, i)
		}
		// The ring is consistent afterwards: it holds the last values.
		for i := range capacity {
			v, ok := r.TryPop()
			require.True(t, ok)
			require.Equal(t, 3*capacity+i, v)
			require.Equal(t, capacity-1-i, r.Len())
		}
	}
}

// A pop that has moved head and not handed its slot on is counted once it
// returns, not before, where its slot is the one under tail; elsewhere the
// cursors decide, as they must once a later pop has returned.
func TestLenCountsAPopInFlightByTheCursorsOnceALaterPopReturned(t *testing.T) {
	r := New[int](4)
	for i := range 4 {
		require.True(t, r.TryPush(i))
	}
	h := atomic.LoadUint64(&r.head)
	require.True(t, atomic.CompareAndSwapUint64(&r.head, h, r.next(h))) // a pop in flight on slot 0
	require.Equal(t, 4, r.Len(), "the pop has not returned and nothing has passed it")
	v, ok := r.TryPop()
	require.True(t, ok)
	require.Equal(t, 1, v)
	require.Equal(t, 2, r.Len(), "a later pop returned: the one in flight took effect before it")
}
