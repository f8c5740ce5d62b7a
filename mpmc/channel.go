package mpmc

import (
	"context"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/shardedsink/shardedsink/internal/backoff"
	"github.com/shardedsink/shardedsink/internal/layout"
	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/vyukov"
)

// Bounded creates a channel that holds at most capacity values and returns
// its first [Sender] and [Receiver]. It panics if capacity is below 1: a
// channel of capacity 0 would be a rendezvous, which this package does not
// offer (use a Go channel for that). It panics too, naming the capacity,
// when the ring's slots (the value and an 8-byte stamp each) would need
// more than 2^47 bytes (2^31 on 32-bit platforms), which no allocation can
// give.
//
// The values live in a ring/vyukov ring, whose
// tail word carries the channel's closed mark, as in concurrent-queue, the
// queue under async-channel: so a send on a bounded channel costs one ring
// push and nothing else, and closing is atomic with respect to every push.
func Bounded[T any](capacity int) (*Sender[T], *Receiver[T]) {
	if capacity < 1 {
		panic(fmt.Sprintf("mpmc: capacity must be at least 1, got %d", capacity))
	}
	var zero T
	slot := uint64(unsafe.Sizeof(zero)) + 8 // the value and the ring's stamp
	if uint64(capacity) > maxRingBytes/slot {
		panic(fmt.Sprintf("mpmc: capacity %d is too large to allocate: %d-byte slots need more than %d bytes", capacity, slot, uint64(maxRingBytes)))
	}
	return newEnds(newChannel[T](vyukov.New[T](capacity), capacity))
}

// maxRingBytes bounds the slots that Bounded asks for: 2^47 bytes on 64-bit
// platforms (below the 2^48 bytes of address space Go's allocator can map
// on amd64 and arm64), 2^31-1 on 32-bit ones. A smaller capacity can still
// fail for want of memory; a larger one could never be allocated, and
// would make the ring's stamp arithmetic overflow.
const maxRingBytes = 1<<(31+16*(^uint(0)>>63)) - 1

// BoundedOn creates a bounded channel on the ring r, which the channel owns
// from then on: nothing else may push to it, pop from it or close it. Its
// capacity is r.Cap(). BoundedOn lets the channel run over any [ring.Ring]
// backend, for instance to benchmark one against another; r must keep the
// ring contract (in particular: no spurious failure), or values may wait
// unnoticed.
//
// A ring that implements [ClosableRing] closes itself: the channel closes
// it, and a send costs what the ring's push costs. Any other ring is used
// behind a guard that counts the sends in flight around each push (two
// atomic read-modify-writes on a word all senders share), so that Close can
// wait for them, and the receives around each pop (two more, on a word of
// the receivers'; see the package doc's Storage section for the
// measurement). The guard also makes [Sender.ForceSend] one step with
// respect to other sends and receives; a TrySend or TryRecv that meets a
// ForceSend in the middle of that step waits for it.
//
// BoundedOn panics, with a message that starts with "mpmc: ", if r is nil,
// if r.Cap() is below 1, or if r is a ClosableRing that is already closed.
// A ClosableRing that its holder closes later, against the rule above,
// closes the channel at the next send that finds it closed, or at the next
// Close or last Release: the channel is then closed like any other.
func BoundedOn[T any](r ring.Ring[T]) (*Sender[T], *Receiver[T]) {
	if r == nil {
		panic("mpmc: BoundedOn needs a ring, got nil")
	}
	capacity := r.Cap()
	if capacity < 1 {
		panic(fmt.Sprintf("mpmc: BoundedOn needs a ring whose Cap() is at least 1, got %d", capacity))
	}
	var q queue[T]
	if cr, ok := r.(ClosableRing[T]); ok {
		if cr.IsClosed() {
			panic("mpmc: BoundedOn needs an open ring, got one that is already closed")
		}
		q = cr // it closes in its push path itself
	} else {
		q = &guardedRing[T]{Ring: r}
	}
	return newEnds(newChannel[T](q, capacity))
}

// Unbounded creates a channel that holds any number of values, and returns
// its first [Sender] and [Receiver]. Sending to it never blocks (see
// [Sender.TrySend] for the spinning that it may do). Its values
// live in linked blocks of 127 slots, so it allocates once per 127 values, not
// once per value.
func Unbounded[T any]() (*Sender[T], *Receiver[T]) {
	return newEnds(newChannel[T](newSegQueue[T](), 0))
}

func newEnds[T any](c *channel[T]) (*Sender[T], *Receiver[T]) {
	c.senders, c.receivers = 1, 1 // not shared yet
	return newSender(c), newReceiver(c)
}

// queue is what the channel needs of its storage: a vyukov.Ring (Bounded),
// a ClosableRing or a guardedRing (BoundedOn), or a segQueue (Unbounded).
// The hot paths call a vyukov.Ring or a segQueue directly, and other queues
// through this interface.
type queue[T any] interface {
	// TryPush appends v, or reports false and leaves the queue unchanged
	// when it is full (never for a segQueue) or closed. A push that
	// succeeds took effect before Close.
	TryPush(v T) bool
	TryPop() (T, bool)
	Len() int
	// Close makes every later TryPush fail, and reports whether this call
	// did; the channel calls it once, and does not rely on the result (a
	// ring that its holder closed reports false). When it returns, no push
	// is still in flight.
	Close() bool
	IsClosed() bool
	// ForcePush is ClosableRing.ForcePush.
	ForcePush(v T) (old T, displaced, ok bool)
}

// # Atomics
//
// Every atomic of the package is a plain field used through sync/atomic's
// functions (atomic.LoadUint64(&x), atomic.AddInt64, ...), never a method
// of atomic.Uint64, atomic.Int64, atomic.Bool or atomic.Pointer. The code
// is generic, so it is compiled in the package that instantiates it, and
// there the methods (small wrappers around the functions) are inlined only
// if that package has sync/atomic's export data loaded: a program that
// imports mpmc but not sync/atomic got a CALL to sync/atomic.(*Uint64).Load
// and friends in TrySend, TryRecv and the unbounded queue (to see it, build a
// program that imports only mpmc with go build -gcflags=-S and grep for
// 'CALL.*sync/atomic'; internal/hotpath's test does). The functions are compiler intrinsics in every
// package. The pointer writes of the unbounded queue are the exception
// that no form avoids: atomic.StorePointer is a call in every package,
// because it carries the GC write barrier; it runs once per block of 127
// values, in functions of its own (see unbounded.go).
//
// The typed 64-bit atomics also gave 8-byte alignment on 32-bit platforms,
// where a misaligned 64-bit atomic panics. Each int64 or uint64 field used
// atomically now follows a zero-size [0]atomic.Int64 (or Uint64) field:
// the compiler aligns sync/atomic's 64-bit types to 8 bytes everywhere, and
// a zero-length array has its element's alignment, so the field after it,
// and the struct, are 8-byte aligned. layout_test.go checks every such
// offset, and GOARCH=386 go test ./mpmc/ runs the package where it matters.

// channel is the state that every end of one channel shares.
//
// # Closing
//
// Close is one atomic step in the queue (see bounded.go for why a closed
// flag checked before the push is not enough): every push that succeeds
// took effect before it, and none after. So:
//
//   - Sending to a closed channel fails with ErrClosed, and the value stays
//     with the caller; a send that overlaps Close either fails, or succeeds
//     and its value is received like any other.
//   - A value accepted before the close stays receivable: closing does not
//     touch the values.
//   - The channel owns its closed state: closing decides who closes it by
//     a compare-and-swap on the channel's own flag, and only the winner
//     closes the queue. So a ring from BoundedOn that reports itself closed
//     already (its holder closed it) cannot make Close wait for a close
//     that never comes; and a send that finds such a ring closed closes the
//     channel, so that receivers learn it too.
//   - closed is set after the queue is closed (and, for a guardedRing, after
//     the pushes in flight have landed), so a receiver that finds the queue
//     empty and then closed has seen the last value there will ever be:
//     ErrClosed is final.
//   - The last receiver's Release closes and then drains the queue; no push
//     can land after the drain.
type channel[T any] struct {
	// Read-mostly: set at creation (closed changes once).
	q        queue[T]        // the storage
	ring     *vyukov.Ring[T] // q, when it is a vyukov.Ring: called directly on the hot paths
	seg      *segQueue[T]    // q, when it is a segQueue: called directly on the hot paths
	capacity int             // 0 for unbounded
	closedCh chan struct{}   // closed by close, for Closed()
	readyCh  chan struct{}   // Receiver.Ready's, made by its first call (see ready.go)
	closing  uint32          // 1 once a close has begun: its compare-and-swap decides who closes
	closed   uint32          // 1 once the queue is closed: no value will come any more
	hooks    *testHooks      // nil outside tests
	_        [layout.CacheLine - 72]byte

	recvq waitQueue[T] // receivers waiting for a value
	sendq waitQueue[T] // senders waiting for room (bounded only)

	// The counts of strong ends. Clone adds one; Release takes one away, and
	// the Release that takes a count to 0 closes the channel. A count never
	// rises from 0 again: Upgrade adds only to a non-zero count.
	_         [0]atomic.Int64 // 8-byte alignment of senders on 32-bit platforms
	senders   int64
	_         [0]atomic.Int64 // and of receivers
	receivers int64
}

// testHooks let the internal tests stop a waiting goroutine at the two
// points where races are decided. ctx is the one the operation was called
// with; send is true for Send, false for Recv.
type testHooks struct {
	beforeBlock func(ctx context.Context, send bool) // enqueued, retry failed, about to block
	afterWake   func(ctx context.Context, send bool) // woken by a token, about to retry
}

func newChannel[T any](q queue[T], capacity int) *channel[T] {
	c := &channel[T]{q: q, capacity: capacity, closedCh: make(chan struct{})}
	c.ring, _ = q.(*vyukov.Ring[T])
	c.seg, _ = q.(*segQueue[T])
	return c
}

// push is q.TryPush, called directly when the type of q is one of ours.
func (c *channel[T]) push(v T) bool {
	if r := c.ring; r != nil {
		return r.TryPush(v)
	}
	if q := c.seg; q != nil {
		return q.TryPush(v)
	}
	return c.q.TryPush(v)
}

// pop is q.TryPop, called directly when the type of q is one of ours.
func (c *channel[T]) pop() (T, bool) {
	if r := c.ring; r != nil {
		return r.TryPop()
	}
	if q := c.seg; q != nil {
		return q.TryPop()
	}
	return c.q.TryPop()
}

// The hot paths (Sender.Send, Sender.TrySend, Receiver.Recv and
// Receiver.TryRecv) are written out in those methods, so that an operation
// that completes at once makes one call, to the queue, and nothing else: in
// shape-instantiated generic code the compiler inlines little, and each
// extra call level cost about a nanosecond. For the same reason they call
// a vyukov.Ring or a segQueue directly rather than through the queue
// interface (whose generic method wrappers cost another call each). What
// follows is what they fall back to.

// full is the error of a send whose push failed: a closed channel reports
// closed, never full.
func (c *channel[T]) full() error {
	if c.q.IsClosed() {
		return c.refused()
	}
	return ErrFull
}

// refused is the error of a push that the queue refused because it is
// closed. The channel is closing, or a ring from BoundedOn was closed
// behind its back: close it then, so that receivers are told and later
// Closes return. Either way, it is closed when refused returns.
func (c *channel[T]) refused() error {
	if atomic.LoadUint32(&c.closed) == 0 {
		c.close()
	}
	return ErrClosed
}

// isClosed reports whether the channel is closed, or closing: sends fail
// from now on.
func (c *channel[T]) isClosed() bool {
	return atomic.LoadUint32(&c.closing) != 0 || c.q.IsClosed()
}

// pushed runs after n successful pushes: it wakes n more receivers, ones
// not yet notified (notify-additional), and signals readiness if it is
// armed. Its load of recvq.waiting, after the push, is the notifier's side
// of the Dekker argument in waiters.go; it costs that one load when no
// receiver waits and readiness is not armed.
func (c *channel[T]) pushed(n int) {
	if w := atomic.LoadUint64(&c.recvq.waiting); w != 0 {
		c.pushedSlow(w, n)
	}
}

// popped runs after n successful pops: it wakes n more senders waiting for
// room, and re-arms readiness when values are left (ready.go). It costs
// one load when neither is needed (always, on an unbounded channel that
// never armed readiness).
func (c *channel[T]) popped(n int) {
	// seq-cst load after the caller's completed pop: the notifier's side
	// of the Dekker argument in waiters.go.
	if w := atomic.LoadUint64(&c.sendq.waiting); w != 0 {
		c.poppedSlow(w, n)
	}
}

// emptyOrClosed is the result of a receive whose pop failed: ErrEmpty on an
// open channel; on a closed one, a value that a send which took effect
// before the close pushed between the failed pop and the closed load, or
// else ErrClosed, which is final. An ErrClosed passes the readiness signal
// on (ready.go), so that every worker selecting on it sees the close.
func (c *channel[T]) emptyOrClosed() (T, error) {
	if atomic.LoadUint32(&c.closed) != 0 {
		if v, ok := c.pop(); ok {
			c.popped(1)
			return v, nil
		}
		if c.isArmed() {
			c.signalReady()
		}
		var zero T
		return zero, ErrClosed
	}
	var zero T
	return zero, ErrEmpty
}

// sendFull is Send after its push failed.
func (c *channel[T]) sendFull(ctx context.Context, v T) error {
	if c.q.IsClosed() {
		return c.refused()
	}
	return c.send(ctx, v)
}

// recvEmpty is Recv after its pop failed.
func (c *channel[T]) recvEmpty(ctx context.Context) (T, error) {
	if v, err := c.emptyOrClosed(); err != ErrEmpty {
		return v, err
	}
	return c.recv(ctx)
}

// close closes the queue, marks the channel closed, closes closedCh and
// wakes every waiter. It reports whether this call closed it: the one whose
// compare-and-swap on closing won. A call that lost waits until the winner
// has marked the channel closed, so that after any close returns, receivers
// see the close as final. The winner's wait is bounded: closing the queue
// waits at most for pushes in flight, none of which waits for room.
func (c *channel[T]) close() bool {
	if !atomic.CompareAndSwapUint32(&c.closing, 0, 1) {
		var b backoff.Backoff
		for atomic.LoadUint32(&c.closed) == 0 {
			b.Snooze()
		}
		return false
	}
	// The result does not matter: false only means that the ring's holder
	// closed it already, and it refuses every push either way.
	c.q.Close()
	// closed goes before the wake-ups: a waiter that enqueues after the
	// notifyAll below took the queue lock after it, so its retry sees it.
	// It is stored under the receivers' lock, so that a send that hands
	// its value to a parked receiver (handToReceiver, which checks under
	// that lock that the queue is open) has handed it before any receiver
	// can see the channel closed.
	c.recvq.mu.Lock()
	atomic.StoreUint32(&c.closed, 1)
	c.recvq.mu.Unlock()
	close(c.closedCh)
	c.recvq.notifyAll()
	c.sendq.notifyAll()
	// After closed is stored: a Ready that armed after this load sees
	// closed and signals itself (ready.go).
	if c.isArmed() {
		c.signalReady()
	}
	return true
}

// drain pops and discards every buffered value, zeroing its slot so that
// the GC can free what it referenced.
func (c *channel[T]) drain() {
	for {
		if _, ok := c.pop(); !ok {
			return
		}
	}
}

// send is Send after the try path found the channel full: the wait loop.
//
// A waiting sender parks its value with its waiter, and a receiver that
// makes room pushes that value for it (wakeSenders), as a Go channel's
// receiver finishes a parked sender's send: the sender wakes with its send
// done, and the room never sits empty while the sender's thread wakes up.
// For that, the sender enqueues, retries its push and parks in one
// critical section of the send queue's lock, so that a receiver never sees
// a waiter that may still push its value itself.
func (c *channel[T]) send(ctx context.Context, v T) error {
	done := ctx.Done()
	q := &c.sendq
	var w *waiter[T]
	for {
		q.mu.Lock()
		w = q.enqueueLocked(w)
		// Retry after enqueueing and before blocking: a pop that completed
		// before the enqueue was not obliged to wake us (it may have read
		// sendq.waiting as 0), so its room must be found here. Only the
		// push is done under the lock; what follows a push (waking a
		// receiver) or a refusal (closing) takes other locks, or this one.
		pushed := c.push(v)
		if pushed || c.q.IsClosed() {
			// Nobody notified w: that takes mu.
			q.unlink(w)
			q.release(w)
			q.mu.Unlock()
			if !pushed {
				return c.refused()
			}
			c.pushed(1)
			return nil
		}
		w.val = v
		w.state = parked
		q.mu.Unlock()
		if c.hooks != nil && c.hooks.beforeBlock != nil {
			c.hooks.beforeBlock(ctx, true)
		}
		if done == nil {
			<-w.ready
		} else {
			select {
			case <-w.ready:
			case <-done:
				// Nothing was pushed, unless a receiver pushed v just now:
				// then the send is done. A token that came with a close
				// goes on as it would have.
				if c.sendq.leaveSender(c, w) {
					return nil
				}
				return ctx.Err()
			}
		}
		// Woken, and out of the queue; the token is consumed. w.state was
		// set before the token was sent, which orders it before this read.
		if w.state == handed {
			q.done(w)
			return nil
		}
		// Notified by a close: the retry above will find it.
		if c.hooks != nil && c.hooks.afterWake != nil {
			c.hooks.afterWake(ctx, true)
		}
	}
}

// wakeSenders runs after n pops made room, when senders wait: for up to n
// parked senders, oldest first, it pushes the sender's value for it and
// wakes it with its send done. It stops at the first push that fails: a
// sender that does not wait took the room (then the waiter stays queued
// for the next room), or the channel closed (and close wakes every waiter).
// Each value pushed wakes a receiver, as its sender's push would have,
// after the lock is released.
func (c *channel[T]) wakeSenders(n int) {
	q := &c.sendq
	q.mu.Lock()
	pushed := c.handOnLocked(n)
	q.mu.Unlock()
	if pushed > 0 {
		c.pushed(pushed)
	}
}

// handOnLocked is wakeSenders's loop, for a caller that holds sendq.mu; it
// returns how many values it pushed, for which the caller wakes receivers
// after unlocking.
func (c *channel[T]) handOnLocked(n int) (pushed int) {
	q := &c.sendq
	for ; n > 0 && q.head != nil; n-- {
		w := q.head
		if !c.push(w.val) {
			break
		}
		q.unlink(w)
		var zero T
		w.val = zero
		w.state = handed
		w.ready <- struct{}{} // never blocks: ready is empty while w is queued
		pushed++
	}
	return pushed
}

// recv is Recv after the try path found the channel empty: the wait loop.
//
// As in send, the receiver enqueues, retries its pop and parks in one
// critical section of the receive queue's lock, so that a sender that
// finds it parked may hand it a value directly (handToReceiver), as a Go
// channel's sender does, and the receiver wakes with its value.
func (c *channel[T]) recv(ctx context.Context) (T, error) {
	done := ctx.Done()
	q := &c.recvq
	var w *waiter[T]
	for {
		q.mu.Lock()
		w = q.enqueueLocked(w)
		// Retry after enqueueing and before blocking: see send. What
		// follows a pop (waking a sender) takes another lock, after this
		// one is released.
		v, ok := c.pop()
		if ok || atomic.LoadUint32(&c.closed) != 0 {
			// Nobody notified w or handed it a value: that takes mu.
			q.unlink(w)
			q.release(w)
			q.mu.Unlock()
			if !ok {
				return c.emptyOrClosed() // closed: a last value, or ErrClosed
			}
			c.popped(1)
			return v, nil
		}
		w.state = parked
		q.mu.Unlock()
		if c.hooks != nil && c.hooks.beforeBlock != nil {
			c.hooks.beforeBlock(ctx, false)
		}
		if done == nil {
			<-w.ready
		} else {
			select {
			case <-w.ready:
			case <-done:
				// Nothing was popped, unless a sender handed us a value
				// just now: then the receive is done. A token that arrived
				// meanwhile goes to the next receiver, with the value it
				// was for.
				if v, ok := q.leaveReceiver(w); ok {
					return v, nil
				}
				var zero T
				return zero, ctx.Err()
			}
		}
		// Woken, and out of the queue; the token is consumed. w.state and
		// w.val were set before the token was sent, which orders them
		// before these reads.
		if w.state == handed {
			v := w.val
			q.done(w) // zeroes w.val
			return v, nil
		}
		if c.hooks != nil && c.hooks.afterWake != nil {
			c.hooks.afterWake(ctx, false)
		}
		// Notified for a value in the queue: the retry above takes it, or
		// finds it taken by another receiver and waits again, at the tail.
	}
}

// handToReceiver gives v to the oldest parked receiver, if there is one,
// the channel is open and its queue empty, and wakes it with v: the send is done without
// the queue. It reports whether it did. Send and TrySend call it before
// their push when they see receivers waiting; a false result sends them on
// to the push.
func (c *channel[T]) handToReceiver(v T) bool {
	q := &c.recvq
	q.mu.Lock()
	w := q.head
	// Only into an empty queue: a value of this sender's still in the
	// queue would otherwise reach a receiver after v, which w may be (it
	// may have been notified for that value, popped it, and parked again).
	// Values that other senders push meanwhile are concurrent with v, and
	// may come before or after it.
	if w == nil || c.q.IsClosed() || c.q.Len() != 0 {
		q.mu.Unlock()
		return false
	}
	q.unlink(w)
	w.val = v
	w.state = handed
	w.ready <- struct{}{} // never blocks: ready is empty while w is queued
	q.mu.Unlock()
	return true
}

// forceSend is ForceSend. Every queue displaces and pushes in one step
// with respect to other pushes (vyukov.Ring and any ClosableRing by
// contract, a guardedRing by holding off other pushes), so the room a
// displacement makes is v's, and no sender waiter is woken for it.
func (c *channel[T]) forceSend(v T) (old T, displaced bool, err error) {
	var ok bool
	if r := c.ring; r != nil {
		old, displaced, ok = r.ForcePush(v)
	} else {
		old, displaced, ok = c.q.ForcePush(v)
	}
	if !ok {
		// Closed. A value displaced before the close goes back to the
		// caller with the error; v was not sent.
		return old, displaced, c.refused()
	}
	c.pushed(1)
	return old, displaced, nil
}

func (c *channel[T]) isFull() bool {
	return c.capacity > 0 && c.q.Len() == c.capacity
}

func (c *channel[T]) loadSenders() int   { return int(atomic.LoadInt64(&c.senders)) }
func (c *channel[T]) loadReceivers() int { return int(atomic.LoadInt64(&c.receivers)) }

// releaseSender drops one sender count; the last one closes the channel.
func (c *channel[T]) releaseSender() {
	if atomic.AddInt64(&c.senders, -1) == 0 {
		c.close()
	}
}

// releaseReceiver drops one receiver count; the last one closes the channel
// and then drops what is buffered. Close comes first, so no send can land a
// value after the drain, and no weak receiver can upgrade (Upgrade fails on
// a zero count and once closed). Any other passes the readiness signal on
// when values are left, in case its goroutine took the signal and will not
// receive (ready.go).
func (c *channel[T]) releaseReceiver() {
	if atomic.AddInt64(&c.receivers, -1) == 0 {
		c.close()
		c.drain()
		return
	}
	if c.isArmed() && c.leftForReady() {
		c.signalReady()
	}
}
