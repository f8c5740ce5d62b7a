package mpmc

import (
	"context"
	"sync/atomic"

	"github.com/shardedsink/shardedsink/internal/layout"
)

// Sender is the sending end of a channel. It is safe for concurrent use by
// many goroutines. [Sender.Clone] makes another counted sender of the same
// channel; [Sender.Release] says that this one is done, and the last
// Release closes the channel. A Sender must not be copied; pass the pointer.
//
// Calling any method on a Sender after its Release, or calling Release
// twice, is a programming error and panics with a message that starts with
// "mpmc: ".
type Sender[T any] struct {
	_ layout.NoCopy // go vet flags copies of a Sender

	// c is the channel: set at creation, never changed, so it is read
	// without synchronisation. A released Sender keeps referring to it
	// (until the Sender itself is garbage), but refuses to use it.
	c *channel[T]

	// released is 1 once Release has run. It is a plain uint32 used only
	// through sync/atomic's functions, which are compiler intrinsics in
	// any package, unlike the methods of atomic.Uint32 (see channel).
	released uint32

	// leak is set by Release too when leak reports are on (see leak.go);
	// nil otherwise.
	leak *uint32
}

func newSender[T any](c *channel[T]) *Sender[T] {
	s := &Sender[T]{c: c}
	s.leak = trackLeak(s, "Sender")
	return s
}

// ch returns the channel, or panics if this Sender was released.
func (s *Sender[T]) ch() *channel[T] {
	if atomic.LoadUint32(&s.released) != 0 {
		panicReleased("Sender")
	}
	if s.c == nil {
		panicZero("Sender")
	}
	return s.c
}

//go:noinline
func panicReleased(end string) {
	panic("mpmc: " + end + " used after Release")
}

// panicZero is the panic of an end that no constructor made: a zero
// Sender, Receiver, WeakSender or WeakReceiver.
//
//go:noinline
func panicZero(end string) {
	panic("mpmc: zero " + end + " used: ends come from Bounded, BoundedOn or Unbounded")
}

// Send sends v, waiting while the channel is full. It returns nil once v is
// in the channel; ErrClosed if the channel is closed, v then staying with
// the caller; or ctx.Err() if ctx ends first.
//
// Send tries first and waits only if the channel is full, so a Send that can
// complete at once costs what [Sender.TrySend] costs: no allocation, no
// select, and no lock unless receivers are waiting (it then takes the
// receivers' wait-queue lock to hand v to one, or to wake one). It
// may therefore succeed even when ctx is already done. A Send that returns
// ctx.Err() has sent nothing, and a wake-up it had received passes on to the
// next waiting sender, so no sender is left waiting while there is room.
//
// Senders waiting on a full channel are served in the order they started to
// wait, one per value received: the receive that makes room pushes the
// oldest waiting sender's value itself and wakes that sender with its send
// done, as a Go channel's receiver finishes a parked send. A Send whose ctx
// ends just after that returns nil: its value was sent.
func (s *Sender[T]) Send(ctx context.Context, v T) error {
	// TrySend written out (see the note on the hot paths in channel.go).
	if atomic.LoadUint32(&s.released) != 0 {
		panicReleased("Sender")
	}
	c := s.c
	if c == nil {
		panicZero("Sender")
	}
	// A receiver that waits gets v directly (one load when none waits).
	if atomic.LoadUint64(&c.recvq.waiting)&^armed != 0 && c.handToReceiver(v) {
		return nil
	}
	var ok bool
	if r := c.ring; r != nil {
		ok = r.TryPush(v)
	} else if q := c.seg; q != nil {
		ok = q.TryPush(v)
	} else {
		ok = c.q.TryPush(v)
	}
	if !ok {
		return c.sendFull(ctx, v)
	}
	// The notifier's side of the Dekker argument (waiters.go); the same
	// load tells whether readiness is armed (ready.go).
	if w := atomic.LoadUint64(&c.recvq.waiting); w != 0 {
		c.pushedSlow(w, 1)
	}
	return nil
}

// TrySend sends v if the channel has room, without waiting. It returns nil,
// ErrFull if the channel is full, or ErrClosed if it is closed (closed
// wins over full). On an error v stays with the caller and the channel is
// unchanged. It takes no lock unless receivers are waiting (it then takes
// their wait-queue lock to hand v to one, or to wake one), and allocates
// nothing, except that
// an unbounded channel that grows past its spare blocks allocates one
// block per 127 values.
//
// "Without waiting" means that it never waits for room: it does not sleep
// until the channel changes. It can still be delayed: when receivers wait,
// by their wait-queue lock; and, like every operation of the package, it
// may spin, and then yield with runtime.Gosched, while another goroutine
// that is in the middle of an operation it depends on has been preempted:
// a receiver that has claimed the slot it needs but not yet emptied it (the
// cost of the ring designs, see ring/vyukov), on an unbounded channel a
// sender that is installing the next block of values, and on a channel
// from [BoundedOn] over a plain ring a ForceSend that holds the ring.
func (s *Sender[T]) TrySend(v T) error {
	// Written out as in Send (see the note on the hot paths in channel.go).
	if atomic.LoadUint32(&s.released) != 0 {
		panicReleased("Sender")
	}
	c := s.c
	if c == nil {
		panicZero("Sender")
	}
	// A receiver that waits gets v directly (one load when none waits).
	if atomic.LoadUint64(&c.recvq.waiting)&^armed != 0 && c.handToReceiver(v) {
		return nil
	}
	var ok bool
	if r := c.ring; r != nil {
		ok = r.TryPush(v)
	} else if q := c.seg; q != nil {
		ok = q.TryPush(v)
	} else {
		ok = c.q.TryPush(v)
	}
	if !ok {
		return c.full()
	}
	if w := atomic.LoadUint64(&c.recvq.waiting); w != 0 {
		c.pushedSlow(w, 1)
	}
	return nil
}

// ForceSend sends v without waiting. When a bounded channel is full it makes
// room by taking the oldest value out, and returns it with displaced true;
// otherwise old is the zero value and displaced false. It returns nil, or
// ErrClosed on a closed channel, and then v was not sent (a value displaced
// just before the close is still returned). On an unbounded channel it is
// TrySend.
//
// Displacing the oldest value and sending v are one step with respect to
// every other send, on every backend: in the ring for a channel from
// [Bounded] (vyukov.Ring.ForcePush) or over a [ClosableRing]; for any other
// ring given to [BoundedOn], the channel holds off other sends for that
// step (a TrySend that meets it waits for it). So ForceSend displaces at
// most one value, the room it makes is v's, and no value is ever dropped:
// each is received, or returned by exactly one ForceSend as displaced.
func (s *Sender[T]) ForceSend(v T) (old T, displaced bool, err error) {
	return s.ch().forceSend(v)
}

// Clone returns a new Sender of the same channel and adds one to
// [Sender.SenderCount]. It works on a closed channel too.
func (s *Sender[T]) Clone() *Sender[T] {
	c := s.ch()
	atomic.AddInt64(&c.senders, 1)
	return newSender(c)
}

// Release says that this Sender is done; it must not be used afterwards.
// The Release of the last Sender closes the channel: receivers take what is
// buffered and then get ErrClosed. Releasing a Sender twice panics.
//
// Release is the Go rendering of dropping a Rust sender. Unlike a Go
// channel, which one owner closes, an mpmc channel closes when every sender
// has released it, so each goroutine can release its own clone.
//
// Release, not [Sender.Close], is the call to defer when an end is done
// with: defer tx.Release(). Go's defer x.Close() habit would close the
// channel for every sender and receiver when this one returns. With
// MPMCDEBUG=leaks in the environment, an end freed by the garbage collector
// without a Release is reported on standard error.
func (s *Sender[T]) Release() {
	if atomic.SwapUint32(&s.released, 1) != 0 {
		panic("mpmc: Sender released twice")
	}
	if s.leak != nil {
		atomic.StoreUint32(s.leak, 1)
	}
	c := s.c
	if c == nil {
		panicZero("Sender")
	}
	c.releaseSender()
}

// Downgrade returns a [WeakSender] of the same channel, which is not
// counted and does not keep the channel open.
func (s *Sender[T]) Downgrade() *WeakSender[T] {
	return &WeakSender[T]{c: s.ch()}
}

// Close closes the channel and reports whether this call closed it: true
// for the first Close of the channel (from either end, or by a last
// Release), false after. Sends then fail with ErrClosed; receivers take
// what is buffered, then get ErrClosed. Every waiting Send and Recv is
// woken. Close does not release this Sender.
//
// Close closes the channel for every end, not just this one: it is not the
// counterpart of a Clone, and not the call to defer when this Sender is
// done with. Call [Sender.Release] for that (defer tx.Release()); the
// channel then closes when the last Sender is released, while other
// goroutines may still be sending. Use Close to stop every end at once.
func (s *Sender[T]) Close() bool { return s.ch().close() }

// Closed returns a channel that is closed when the channel closes, to wait
// on in a select.
func (s *Sender[T]) Closed() <-chan struct{} { return s.ch().closedCh }

// IsClosed reports whether the channel is closed.
func (s *Sender[T]) IsClosed() bool { return s.ch().isClosed() }

// Len returns the number of values in the channel: a snapshot, which may be
// stale by the time it is read when other goroutines use the channel.
func (s *Sender[T]) Len() int { return s.ch().q.Len() }

// Cap returns the capacity of a bounded channel, or 0 for an unbounded one.
func (s *Sender[T]) Cap() int { return s.ch().capacity }

// IsEmpty reports whether the channel holds no value (a snapshot).
func (s *Sender[T]) IsEmpty() bool { return s.ch().q.Len() == 0 }

// IsFull reports whether a bounded channel holds as many values as its
// capacity (a snapshot). An unbounded channel is never full.
func (s *Sender[T]) IsFull() bool { return s.ch().isFull() }

// SenderCount returns the number of Senders of the channel that have not
// been released. Weak senders are not counted.
func (s *Sender[T]) SenderCount() int { return s.ch().loadSenders() }

// ReceiverCount returns the number of Receivers of the channel that have
// not been released. Weak receivers are not counted.
func (s *Sender[T]) ReceiverCount() int { return s.ch().loadReceivers() }
