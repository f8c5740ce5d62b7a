package mpmc

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/allocs"
)

// Unit tests of the wait queue alone: who holds a token after each step.
// The end-to-end protocol tests are in wakeup_test.go.

// enqueue is what a waiting Recv does to its queue before it blocks:
// enqueue under the lock and park.
func (q *waitQueue[T]) enqueue(w *waiter[T]) *waiter[T] {
	q.mu.Lock()
	w = q.enqueueLocked(w)
	w.state = parked
	q.mu.Unlock()
	return w
}

// leave is what a waiting Recv whose ctx ended does.
func (q *waitQueue[T]) leave(w *waiter[T]) { q.leaveReceiver(w) }

func hasToken(w *waiter[int]) bool { return len(w.ready) == 1 }

func TestNotifyWakesTheOldestWaiterFirst(t *testing.T) {
	var q waitQueue[int]
	w1 := q.enqueue(nil)
	w2 := q.enqueue(nil)
	require.Equal(t, 2, int(atomic.LoadUint64(&q.waiting)))

	q.notify(1)
	require.True(t, hasToken(w1))
	require.False(t, hasToken(w2))
	require.Equal(t, 1, int(atomic.LoadUint64(&q.waiting)))
}

// notify is notify-additional: a notified waiter that has not run yet does
// not absorb the next notification.
func TestNotifyIsAdditional(t *testing.T) {
	var q waitQueue[int]
	w1 := q.enqueue(nil)
	w2 := q.enqueue(nil)
	q.notify(1)
	q.notify(1)
	require.True(t, hasToken(w1))
	require.True(t, hasToken(w2))
	require.Equal(t, 0, int(atomic.LoadUint64(&q.waiting)))
	q.notify(1) // nobody left: nothing happens
}

func TestNotifyWithNobodyWaitingCostsNoLock(t *testing.T) {
	var q waitQueue[int]
	q.mu.Lock() // notify must not need it
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.notify(1)
	}()
	// A notify that takes the lock blocks on it: fail then, rather than
	// hang until the test binary's timeout. (A goroutine blocked on a
	// mutex is not durably blocked, so testing/synctest cannot tell.)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		q.mu.Unlock()
		<-done
		t.Fatal("notify with nobody waiting took the lock")
	}
	q.mu.Unlock()
}

func TestAQueuedWaiterThatLeavesPassesNothingOn(t *testing.T) {
	var q waitQueue[int]
	w1 := q.enqueue(nil)
	w2 := q.enqueue(nil)
	q.leave(w1)
	require.False(t, hasToken(w2))
	require.Equal(t, 1, int(atomic.LoadUint64(&q.waiting)))
	q.notify(1)
	require.True(t, hasToken(w2), "w2 is now the oldest")
}

func TestANotifiedWaiterThatLeavesPassesItsTokenOn(t *testing.T) {
	var q waitQueue[int]
	w1 := q.enqueue(nil)
	w2 := q.enqueue(nil)
	w3 := q.enqueue(nil)
	q.notify(1)
	require.True(t, hasToken(w1))

	q.leave(w1) // gives up without consuming its token
	require.False(t, hasToken(w1), "the token was drained")
	require.True(t, hasToken(w2), "and passed to the next waiter")
	require.False(t, hasToken(w3))
	require.Equal(t, 1, int(atomic.LoadUint64(&q.waiting)))
}

func TestANotifiedWaiterThatLeavesWithNobodyQueuedDropsItsToken(t *testing.T) {
	var q waitQueue[int]
	w := q.enqueue(nil)
	q.notify(1)
	q.leave(w)
	require.Equal(t, 0, int(atomic.LoadUint64(&q.waiting)))
	require.Equal(t, 1, q.nfree)
	require.False(t, hasToken(q.free))
}

func TestNotifyAllWakesEveryQueuedWaiter(t *testing.T) {
	var q waitQueue[int]
	ws := []*waiter[int]{q.enqueue(nil), q.enqueue(nil), q.enqueue(nil)}
	q.notify(1)
	q.notifyAll()
	for i, w := range ws {
		require.True(t, hasToken(w), "waiter %d", i)
	}
	require.Equal(t, 0, int(atomic.LoadUint64(&q.waiting)))
}

func TestAWokenWaiterReenqueuesAtTheTail(t *testing.T) {
	var q waitQueue[int]
	w1 := q.enqueue(nil)
	w2 := q.enqueue(nil)
	q.notify(1)
	require.True(t, hasToken(w1))
	<-w1.ready // w1 runs, finds its value taken, and waits again
	require.Same(t, w1, q.enqueue(w1))
	q.notify(1)
	require.True(t, hasToken(w2), "w2 is ahead of w1 now")
	require.False(t, hasToken(w1))
}

func TestWaitersAreReused(t *testing.T) {
	var q waitQueue[int]
	w := q.enqueue(nil)
	q.notify(1)
	require.True(t, hasToken(w))
	<-w.ready
	q.done(w)
	require.Same(t, w, q.enqueue(nil), "the free list gives the waiter back")

	require.Zero(t, allocs.PerCall(1000, func() {
		w := q.enqueue(nil)
		q.leave(w)
	}))
}

func TestTheFreeListIsBounded(t *testing.T) {
	var q waitQueue[int]
	ws := make([]*waiter[int], maxFree+10)
	for i := range ws {
		ws[i] = q.enqueue(nil)
	}
	for _, w := range ws {
		q.leave(w)
	}
	require.Equal(t, maxFree, q.nfree)
}
