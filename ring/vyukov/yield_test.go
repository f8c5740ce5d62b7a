package vyukov

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/stall"
)

// stallLimit is what a wait for a preempted slot owner may cost at
// GOMAXPROCS=1: a few yields, well under the scheduler's preemption slice,
// which a wait that never yields lasts in every trial.
const stallLimit = stall.PreemptSlice / 5

// requireYields runs the scenario of claim at GOMAXPROCS=1 (see package
// stall) and requires that the waiting operation ends long before a
// preemption slice: that it yields to the owner rather than spin until the
// scheduler takes the processor away.
func requireYields(t *testing.T, claim func() (op, finish func())) {
	t.Helper()
	times := stall.Times(9, claim)
	t.Logf("waits: %v", times)
	require.Less(t, stall.Median(times), stallLimit,
		"the wait for a preempted slot owner lasted until the scheduler preempted the waiter: it does not yield")
}

// fullWithAPreemptedConsumer returns a full ring of 4 whose head a
// consumer has moved past slot 0 without handing the slot on (preempted
// between its compare-and-swap and its store of the stamp), and the
// consumer's finish.
func fullWithAPreemptedConsumer() (*Ring[int], func()) {
	r := New[int](4)
	for i := range 4 {
		r.TryPush(i)
	}
	h := atomic.LoadUint64(&r.head)
	atomic.StoreUint64(&r.head, r.next(h))
	return r, func() {
		r.slots[0].value = 0
		atomic.StoreUint64(&r.slots[0].stamp, h+r.oneLap)
	}
}

func TestWaitsForAPreemptedSlotOwnerYield(t *testing.T) {
	t.Run("TryPush waits for a consumer that claimed the slot", func(t *testing.T) {
		requireYields(t, func() (func(), func()) {
			// The ring is not full (head moved on), so TryPush must wait
			// for the consumer to hand slot 0 on.
			r, finish := fullWithAPreemptedConsumer()
			return func() { require.True(t, r.TryPush(4)) }, finish
		})
	})
	t.Run("TryPop waits for a producer that claimed the slot", func(t *testing.T) {
		requireYields(t, func() (func(), func()) {
			r := New[int](4)
			// A producer claims slot 0 and is preempted before it
			// publishes: the ring is not empty, so TryPop must wait.
			tl := atomic.LoadUint64(&r.tail)
			atomic.StoreUint64(&r.tail, r.next(tl))
			return func() {
					v, ok := r.TryPop()
					require.True(t, ok)
					require.Equal(t, 7, v)
				}, func() {
					r.slots[0].value = 7
					atomic.StoreUint64(&r.slots[0].stamp, tl+1)
				}
		})
	})
	t.Run("ForcePush that lost the head race waits for the consumer that won it", func(t *testing.T) {
		requireYields(t, func() (func(), func()) {
			// The consumer has moved head past the oldest value
			// (ForcePush's compare-and-swap on head fails): ForcePush
			// must wait for room, and then displace nothing.
			r, finish := fullWithAPreemptedConsumer()
			return func() {
				_, displaced, ok := r.ForcePush(4)
				require.True(t, ok)
				require.False(t, displaced, "the consumer made room")
			}, finish
		})
	})
}
