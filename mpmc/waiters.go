package mpmc

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/shardedsink/shardedsink/internal/layout"
	"github.com/shardedsink/shardedsink/internal/machine"
)

// This file is the wait queue: where a Send waits for room and a Recv for a
// value. It follows smol-rs/event-listener as async-channel uses it
// (notify_additional, and a dropped listener that passes its notification
// on), rendered with one 1-buffered Go channel per waiting goroutine.
//
// # The protocol
//
// A goroutine that must wait takes an idle waiter and, in one critical
// section of the queue's lock, enqueues it at the tail of the queue, tries
// its operation once more, and (if that fails) parks: from then on it does
// nothing itself until it is woken. The goroutine that completes the
// opposite operation serves the oldest parked waiter, as a Go channel does:
//
//   - A send that finds receivers parked and nothing buffered hands its
//     value to the oldest one (channel.handToReceiver) and wakes it with
//     it: the receive is done, the value never went through the queue.
//     With values buffered it pushes instead (a receiver would otherwise
//     get this sender's value before an older one of the same sender), and
//     then notifies.
//   - A pop that finds senders parked pushes the oldest one's value for it
//     (channel.wakeSenders) and wakes it: the send is done. A push that
//     fails there (another sender took the room, or the channel closed)
//     leaves the waiter queued, for the next pop or for Close.
//   - notify dequeues the oldest parked waiter, marks it notified and puts
//     a token in its channel; the waiter then retries. Receivers are
//     notified for a value pushed into the queue; Close notifies everyone.
//
// So:
//
//   - Waiters are served in FIFO order.
//   - Notify is notify-additional: a notified waiter is no longer in the
//     queue, so the next notify goes to the next waiter even when the first
//     one has not run yet. A slow waiter cannot absorb a wake-up meant for
//     the next value.
//   - A notified waiter owns its wake-up: it retries, and when the retry
//     fails (another goroutine took the value first) it enqueues again at
//     the tail. Nothing was lost: whoever took the value did what the
//     wake-up was for.
//   - A waiter whose ctx ends calls leaveReceiver or leaveSender. If it is
//     still queued it just unlinks, having done nothing. If it was handed a
//     value, or its value was pushed, its operation is done and it reports
//     success. If it had been notified, the token is still in its channel,
//     and the wake-up passes on to the next queued waiter. That is what
//     keeps a cancelled Recv from stranding a value. Passing on a wake-up
//     that turns out not to be needed costs a spurious retry, never a loss.
//
// # Why notify can skip the lock
//
// Notify runs on every successful push and pop, so when nobody waits it must
// cost one atomic load, not a lock. waiting counts the queued, un-notified
// waiters. The race to rule out is the store-buffer (Dekker) one:
//
//	waiter:   waiting.Add(1) ... retry the operation (atomics of the ring)
//	notifier: complete the operation (atomics of the ring) ... waiting.Load()
//
// Go's atomics are sequentially consistent (the memory model: all atomic
// operations behave as if executed in one order consistent with each
// goroutine's program order), and sync.Mutex is built from them too. If the
// notifier's load returns 0, it came before the waiter's Add in that order,
// so the waiter's retry comes after the notifier's operation and sees its
// effect: the value is there to take, or the room is there to fill. If the
// load sees the waiter, notify takes the lock and wakes it (or an older
// waiter). Either way no waiter sleeps through a completed operation.
//
// Close marks the channel closed before it takes the lock to wake everyone,
// and a waiter enqueues and retries under the same lock: either the closer
// finds the waiter in the queue, or the waiter's retry finds the channel
// closed.

// waiterState is where a waiter stands. It is guarded by its queue's mu.
type waiterState uint8

const (
	// idle: in no queue, holding no token.
	idle waiterState = iota
	// queued: just enqueued, its retry in progress under mu (so nobody
	// else sees this state). Counted by waitQueue.waiting.
	queued
	// parked: in the queue, committed to block: a sender's value is in
	// val and the sender will not push it itself until it is woken; a
	// receiver will not pop until it is woken, and may be handed a value.
	// Counted by waitQueue.waiting. Every waiter in a queue is parked.
	parked
	// notified: dequeued by a notifier, which put a token in ready. The
	// token stays there until the waiter receives it or leaveReceiver or
	// leaveSender drains it.
	notified
	// handed: dequeued by the other side, which put a token in ready and
	// did the waiter's operation for it: a receiver pushed the sender's
	// value, or a sender handed the receiver a value in val.
	handed
)

// waiter is one blocked goroutine's place in a waitQueue.
type waiter[T any] struct {
	// ready has capacity 1 and holds at most one token: a waiter is queued
	// only while its channel is empty, and is notified only while queued,
	// so the notifier's send never blocks.
	ready chan struct{}

	state      waiterState // guarded by the queue's mu
	prev, next *waiter[T]  // guarded by the queue's mu; links while queued, next links the free list

	// val is a parked sender's value, which a receiver that makes room
	// pushes on its behalf (see channel.wakeSenders). Guarded by the
	// queue's mu; zero outside the send queue.
	val T
}

// waitQueue is a FIFO queue of waiting goroutines: one for receivers
// waiting for a value, one for senders waiting for room.
type waitQueue[T any] struct {
	// waiting is the number of queued, un-notified waiters. It changes only
	// under mu; notify reads it without mu (see the file comment for why
	// that is safe).
	_       [0]atomic.Uint64 // 8-byte alignment of waiting on 32-bit platforms (see channel)
	waiting uint64           // used only through sync/atomic's functions and machine.StoreRelease

	mu         sync.Mutex
	head, tail *waiter[T] // oldest and newest queued waiter

	// free keeps idle waiters, linked through next, so that a wait does
	// not allocate once the channel has seen as many waiters at once as
	// it sees now (up to maxFree are kept). The list belongs to this queue
	// rather than to a global sync.Pool so that a waiter's Go channel never
	// moves between channels: under testing/synctest, a Go channel created
	// in one bubble must not be used from another, and an mpmc channel
	// created in a bubble then keeps all of its waiters there.
	free  *waiter[T]
	nfree int

	// Senders read the receivers' waiting count on every push and
	// receivers read the senders' on every pop; waiters write them. The
	// padding keeps each queue on its own 128-byte block (the adjacent-line
	// pair Intel CPUs prefetch) so that churn on one side's queue does not
	// evict the other's count or the channel's read-mostly fields.
	_ [layout.CacheLine - 8 - unsafe.Sizeof(sync.Mutex{}) - 3*unsafe.Sizeof(uintptr(0)) - unsafe.Sizeof(0)]byte // waiting, mu, three pointers, nfree
}

// maxFree bounds the idle waiters a queue keeps after a burst of waiting.
const maxFree = 256

// release puts the idle waiter w on the free list. The caller holds mu.
func (q *waitQueue[T]) release(w *waiter[T]) {
	w.state = idle
	w.prev = nil
	var zero T
	w.val = zero // let the GC free what a sender's value references
	if q.nfree < maxFree {
		w.next = q.free
		q.free = w
		q.nfree++
	} else {
		w.next = nil
	}
}

// enqueueLocked appends w at the tail of the queue, in state queued, and
// returns it. A nil w takes an idle waiter from the free list, or a new
// one; otherwise w must be a waiter that was notified and has consumed its
// token. The caller holds mu, and retries its operation before it
// releases mu: it then either leaves the queue again (unlink) or parks.
func (q *waitQueue[T]) enqueueLocked(w *waiter[T]) *waiter[T] {
	if w == nil {
		if w = q.free; w != nil {
			q.free = w.next
			q.nfree--
		} else {
			w = &waiter[T]{ready: make(chan struct{}, 1)}
		}
	}
	w.state = queued
	w.next = nil
	w.prev = q.tail
	if q.tail == nil {
		q.head = w
	} else {
		q.tail.next = w
	}
	q.tail = w
	// A locked add, not a release store: this is the waiter's store of the
	// Dekker pair (see above), and its retry's loads must not pass it.
	atomic.AddUint64(&q.waiting, 1)
	return w
}

// unlink removes the queued waiter w. The caller holds mu.
func (q *waitQueue[T]) unlink(w *waiter[T]) {
	if w.prev == nil {
		q.head = w.next
	} else {
		w.prev.next = w.next
	}
	if w.next == nil {
		q.tail = w.prev
	} else {
		w.next.prev = w.prev
	}
	w.prev, w.next = nil, nil
	// A release store, not a locked add: waiting changes only under mu, so
	// the load sees the last value and no update is lost. It pairs with
	// notify's atomic.LoadUint64, and nothing depends on its order against
	// a later load: only an increment is a Dekker store (a notifier that
	// reads a count not yet decremented takes the lock for nothing).
	machine.StoreRelease(&q.waiting, atomic.LoadUint64(&q.waiting)-1)
}

// notify wakes up to n queued waiters that have not been notified yet,
// oldest first (notify-additional). It costs one atomic load when nobody
// waits. The armed bit of waiting (ready.go) is not a waiter: the channel
// loads the word itself after a push (channel.pushed), to handle that bit
// too, and calls notifySlow when a waiter is counted.
func (q *waitQueue[T]) notify(n int) {
	// seq-cst load after the caller's completed push or pop: see the file
	// comment for the Dekker argument.
	if atomic.LoadUint64(&q.waiting)&^armed == 0 {
		return
	}
	q.notifySlow(n)
}

func (q *waitQueue[T]) notifySlow(n int) {
	q.mu.Lock()
	q.notifyLocked(n)
	q.mu.Unlock()
}

// notifyLocked wakes up to n queued waiters. The caller holds mu.
func (q *waitQueue[T]) notifyLocked(n int) {
	for ; n > 0 && q.head != nil; n-- {
		w := q.head
		q.unlink(w)
		w.state = notified
		// Never blocks: ready is empty while w is queued. The send is the
		// happens-before edge to the waiter, which reads nothing we wrote
		// except through its own later lock.
		w.ready <- struct{}{}
	}
}

// notifyAll wakes every queued waiter. Close uses it.
func (q *waitQueue[T]) notifyAll() {
	q.mu.Lock()
	q.notifyLocked(int(^uint(0) >> 1))
	q.mu.Unlock()
}

// leaveSender is called by a parked sender whose ctx ended, on the send
// queue of c: it reports true when a receiver pushed the sender's value
// meanwhile (the send is done: the caller returns nil), and otherwise
// makes sure that nothing was pushed. A token that a close sent goes on to
// the next waiter, as in leaveReceiver.
func (q *waitQueue[T]) leaveSender(c *channel[T], w *waiter[T]) bool {
	q.mu.Lock()
	sent := false
	pushed := 0
	switch w.state {
	case parked:
		q.unlink(w)
	case handed:
		<-w.ready
		sent = true
	case notified:
		<-w.ready // a close's: every waiter has one, so passing it on is moot
		pushed = c.handOnLocked(1)
	}
	q.release(w)
	q.mu.Unlock()
	if pushed > 0 {
		c.pushed(pushed)
	}
	return sent
}

// leaveReceiver is called by a parked receiver whose ctx ended: it
// returns the value and true when a sender handed it one meanwhile (the
// receive is done: the caller returns it). Otherwise it takes nothing: a
// waiter still queued just unlinks; a notified one drains the token it
// never consumed and passes the wake-up on to the next queued waiter, so
// that the value it was woken for does not go unclaimed while another
// goroutine sleeps. w goes back to the free list; the caller must not use
// it again.
func (q *waitQueue[T]) leaveReceiver(w *waiter[T]) (v T, ok bool) {
	q.mu.Lock()
	switch w.state {
	case parked:
		q.unlink(w)
	case handed:
		<-w.ready
		v, ok = w.val, true
	case notified:
		<-w.ready // the notifier's token, sent under mu: it is there
		q.notifyLocked(1)
	}
	q.release(w)
	q.mu.Unlock()
	return v, ok
}

// done is called by a waiter that received its token and stops waiting (its
// retry succeeded or found the channel closed). w is in no queue and its
// channel is empty; it goes back to the free list, and the caller must not
// use it again. No notifier holds a reference to it: notifiers reach
// waiters only through the queue.
func (q *waitQueue[T]) done(w *waiter[T]) {
	q.mu.Lock()
	q.release(w)
	q.mu.Unlock()
}
