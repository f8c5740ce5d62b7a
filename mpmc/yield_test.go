package mpmc

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/machine"
	"github.com/shardedsink/shardedsink/internal/stall"
)

// The unbounded queue's waits for another goroutine's step yield, as the
// ring's do (ring/vyukov's yield test): each scenario below leaves a step
// claimed by an owner that is not running, at GOMAXPROCS=1, and requires
// the waiting operation to end long before the scheduler's preemption
// slice, which a wait that never yields lasts in every trial.
func TestSegQueueWaitsForAPreemptedOwnerYield(t *testing.T) {
	requireYields := func(t *testing.T, claim func() (op, finish func())) {
		t.Helper()
		times := stall.Times(9, claim)
		t.Logf("waits: %v", times)
		require.Less(t, stall.Median(times), stall.PreemptSlice/5,
			"the wait for a preempted owner lasted until the scheduler preempted the waiter: it does not yield")
	}
	// claimTail moves the tail index one position on, as a producer's
	// compare-and-swap does, and returns the slot it claimed.
	claimTail := func(q *segQueue[int]) *segSlot[int] {
		tail := atomic.LoadUint64(&q.tailIndex)
		atomic.StoreUint64(&q.tailIndex, tail+1<<segShift)
		return &loadBlock[int](&q.tailBlock).slots[(tail>>segShift)%segLap]
	}
	publish := func(s *segSlot[int], v int) {
		s.value = v
		machine.StoreRelease(&s.state, slotWrite)
	}

	t.Run("TryPop waits for the producer that claimed the slot", func(t *testing.T) {
		requireYields(t, func() (func(), func()) {
			q := newSegQueue[int]()
			s := claimTail(q)
			return func() {
				v, ok := q.TryPop()
				require.True(t, ok)
				require.Equal(t, 7, v)
			}, func() { publish(s, 7) }
		})
	})
	t.Run("TryPush waits for the producer that installs the next block", func(t *testing.T) {
		requireYields(t, func() (func(), func()) {
			q := newSegQueue[int]()
			for i := range segBlockCap - 1 {
				q.TryPush(i)
			}
			block := loadBlock[int](&q.tailBlock)
			s := claimTail(q) // the block's last slot: the index rests on the sentinel
			return func() {
					require.True(t, q.TryPush(1000))
				}, func() {
					q.installNext(block, new(segBlock[int]))
					publish(s, segBlockCap-1)
				}
		})
	})
	t.Run("TryPop of a block's last slot waits for the link to the next block", func(t *testing.T) {
		requireYields(t, func() (func(), func()) {
			q := newSegQueue[int]()
			for i := range segBlockCap - 1 {
				q.TryPush(i)
				q.TryPop()
			}
			block := loadBlock[int](&q.tailBlock)
			s := claimTail(q)
			return func() {
					v, ok := q.TryPop()
					require.True(t, ok)
					require.Equal(t, segBlockCap-1, v)
				}, func() {
					q.installNext(block, new(segBlock[int]))
					publish(s, segBlockCap-1)
				}
		})
	})
	t.Run("TryPop waits for the consumer that moves head to the next block", func(t *testing.T) {
		requireYields(t, func() (func(), func()) {
			q := newSegQueue[int]()
			for i := range segBlockCap + 1 {
				q.TryPush(i)
			}
			for range segBlockCap - 1 {
				q.TryPop()
			}
			// A consumer claims the block's last slot: head rests on the
			// sentinel until it has moved head into the next block.
			block := loadBlock[int](&q.headBlock)
			head := atomic.LoadUint64(&q.headIndex) + 1<<segShift
			atomic.StoreUint64(&q.headIndex, head)
			return func() {
				v, ok := q.TryPop()
				require.True(t, ok)
				require.Equal(t, segBlockCap, v)
			}, func() { q.enterNext(block, head) }
		})
	})
}
