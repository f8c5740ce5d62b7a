package mpmc

import (
	"context"
	"iter"
	"sync/atomic"

	"github.com/shardedsink/shardedsink/internal/layout"
)

// Receiver is the receiving end of a channel. It is safe for concurrent use
// by many goroutines: several goroutines may share one Receiver, each
// waiting for the next value, and each value goes to exactly one of them.
// [Receiver.Clone] makes another counted receiver; [Receiver.Release] says
// that this one is done, and the last Release closes the channel and drops
// what is buffered. A Receiver must not be copied; pass the pointer.
//
// Calling any method on a Receiver after its Release, or calling Release
// twice, is a programming error and panics with a message that starts with
// "mpmc: ".
type Receiver[T any] struct {
	_ layout.NoCopy // go vet flags copies of a Receiver

	// c is the channel: set at creation, never changed, so it is read
	// without synchronisation. A released Receiver keeps referring to it
	// (until the Receiver itself is garbage), but refuses to use it.
	c *channel[T]

	// released is 1 once Release has run. It is a plain uint32 used only
	// through sync/atomic's functions, which are compiler intrinsics in
	// any package, unlike the methods of atomic.Uint32 (see channel).
	released uint32

	// leak is set by Release too when leak reports are on (see leak.go);
	// nil otherwise.
	leak *uint32
}

func newReceiver[T any](c *channel[T]) *Receiver[T] {
	r := &Receiver[T]{c: c}
	r.leak = trackLeak(r, "Receiver")
	return r
}

// ch returns the channel, or panics if this Receiver was released.
func (r *Receiver[T]) ch() *channel[T] {
	if atomic.LoadUint32(&r.released) != 0 {
		panicReleased("Receiver")
	}
	if r.c == nil {
		panicZero("Receiver")
	}
	return r.c
}

// Recv receives the oldest value, waiting while the channel is empty. It
// returns ErrClosed only when the channel is closed and no value is left,
// and ctx.Err() if ctx ends first.
//
// Recv tries first and waits only if the channel is empty, so a Recv that
// can complete at once costs what [Receiver.TryRecv] costs: no allocation,
// no select, and no lock unless senders are waiting for room (it then takes
// the senders' wait-queue lock to wake one). It may therefore succeed even when ctx is already done. A Recv
// that returns ctx.Err() has taken nothing, and a wake-up it had received
// passes on to the next waiting receiver with the value it was for, so no
// receiver is left waiting while a value is buffered.
//
// Receivers waiting on an empty channel are served in the order they
// started to wait, one per value sent: a send that finds nothing buffered
// hands its value to the oldest waiting receiver directly, which wakes with
// it, as from a Go channel. A Recv whose ctx ends just after that returns
// the value.
func (r *Receiver[T]) Recv(ctx context.Context) (T, error) {
	// TryRecv written out (see the note on the hot paths in channel.go).
	if atomic.LoadUint32(&r.released) != 0 {
		panicReleased("Receiver")
	}
	c := r.c
	if c == nil {
		panicZero("Receiver")
	}
	var v T
	var ok bool
	if r := c.ring; r != nil {
		v, ok = r.TryPop()
	} else if q := c.seg; q != nil {
		v, ok = q.TryPop()
	} else {
		v, ok = c.q.TryPop()
	}
	if ok {
		if w := atomic.LoadUint64(&c.sendq.waiting); w != 0 {
			c.poppedSlow(w, 1) // senders to wake, or readiness to re-arm
		}
		return v, nil
	}
	return c.recvEmpty(ctx)
}

// TryRecv receives the oldest value without waiting. It returns ErrEmpty
// if the channel holds no value, and ErrClosed if it is closed and holds
// no value. It takes no lock unless senders are waiting for room (it then
// takes their wait-queue lock to wake one), and allocates nothing.
//
// "Without waiting" means that it never waits for a value: it does not
// sleep until the channel changes. It can still be delayed: when senders
// wait, by their wait-queue lock; and, like every operation of the
// package, it may spin, and then yield with runtime.Gosched, while another
// goroutine that is in the middle of an operation it depends on has been
// preempted: a sender that has claimed the slot it needs but not yet
// written it (the cost of the ring designs, see ring/vyukov), or on an
// unbounded channel one that is installing the next block of values.
func (r *Receiver[T]) TryRecv() (T, error) {
	// Written out as in Recv (see the note on the hot paths in channel.go).
	if atomic.LoadUint32(&r.released) != 0 {
		panicReleased("Receiver")
	}
	c := r.c
	if c == nil {
		panicZero("Receiver")
	}
	var v T
	var ok bool
	if r := c.ring; r != nil {
		v, ok = r.TryPop()
	} else if q := c.seg; q != nil {
		v, ok = q.TryPop()
	} else {
		v, ok = c.q.TryPop()
	}
	if ok {
		if w := atomic.LoadUint64(&c.sendq.waiting); w != 0 {
			c.poppedSlow(w, 1) // senders to wake, or readiness to re-arm
		}
		return v, nil
	}
	return c.emptyOrClosed()
}

// RecvMany waits like [Receiver.Recv] for one value, then takes up to
// len(dst)-1 more that are already buffered, without waiting, and stores
// them in dst in order. It returns the number stored, and the error of the
// wait: ErrClosed once the channel is closed and empty, or ctx.Err() (with
// 0 values). An empty dst returns 0, nil at once.
func (r *Receiver[T]) RecvMany(ctx context.Context, dst []T) (int, error) {
	c := r.ch()
	if len(dst) == 0 {
		return 0, nil
	}
	v, ok := c.pop()
	freed := 0 // slots freed here, for which no sender was woken yet
	if ok {
		freed++
	} else {
		var err error
		if v, err = c.recvEmpty(ctx); err != nil { // wakes a sender for its value
			return 0, err
		}
	}
	dst[0] = v
	n := 1
	for n < len(dst) {
		// Pop into v, not into dst[n]: a failed pop returns the zero
		// value, which must not land past the count returned.
		if v, ok = c.pop(); !ok {
			break
		}
		dst[n] = v
		n++
		freed++
	}
	if freed > 0 {
		c.popped(freed) // wake as many senders as slots were freed
	}
	return n, nil
}

// All returns an iterator over the values received, for a range-over-func
// loop: the Go rendering of the original's Stream. Each step is a Recv
// with ctx. The iteration ends when the channel is closed and empty, or
// when ctx ends; check ctx.Err() after the loop to tell the two apart.
// Breaking out of the loop takes no further value.
//
// ctx is checked before every step, not only when the channel is empty, so
// a loop over a channel that never runs dry still ends soon after ctx does
// (at most the step in progress completes), and a ctx that is already done
// yields nothing even when values are buffered. The check is a
// non-blocking receive from ctx.Done(), and nothing for a ctx that cannot
// end (context.Background, whose Done is nil): about 6 ns per value with
// a cancellable ctx, none measurable with context.Background (go test -run
// '^$' -bench All -count=10 ./mpmc/; the run is in docs/design.md, "mpmc:
// mechanism").
func (r *Receiver[T]) All(ctx context.Context) iter.Seq[T] {
	r.ch() // a released Receiver panics here, not at the first step
	return func(yield func(T) bool) {
		done := ctx.Done()
		for {
			if done != nil {
				select {
				case <-done:
					return
				default:
				}
			}
			c := r.ch()
			v, ok := c.pop()
			if ok {
				c.popped(1)
			} else {
				var err error
				if v, err = c.recvEmpty(ctx); err != nil {
					return
				}
			}
			if !yield(v) {
				return
			}
		}
	}
}

// Clone returns a new Receiver of the same channel and adds one to
// [Receiver.ReceiverCount]. It works on a closed channel too.
func (r *Receiver[T]) Clone() *Receiver[T] {
	c := r.ch()
	atomic.AddInt64(&c.receivers, 1)
	return newReceiver(c)
}

// Release says that this Receiver is done; it must not be used afterwards.
// The Release of the last Receiver closes the channel and drops at once the
// values left in it, clearing their references so that the GC can free
// them: nothing could receive them any more. Releasing a Receiver twice
// panics.
//
// Release, not [Receiver.Close], is the call to defer when an end is done
// with: defer rx.Release(). Go's defer x.Close() habit would close the
// channel for every sender and receiver when this one returns. With
// MPMCDEBUG=leaks in the environment, an end freed by the garbage collector
// without a Release is reported on standard error.
func (r *Receiver[T]) Release() {
	if atomic.SwapUint32(&r.released, 1) != 0 {
		panic("mpmc: Receiver released twice")
	}
	if r.leak != nil {
		atomic.StoreUint32(r.leak, 1)
	}
	c := r.c
	if c == nil {
		panicZero("Receiver")
	}
	c.releaseReceiver()
}

// Downgrade returns a [WeakReceiver] of the same channel, which is not
// counted and does not keep the channel open.
func (r *Receiver[T]) Downgrade() *WeakReceiver[T] {
	return &WeakReceiver[T]{c: r.ch()}
}

// Close closes the channel and reports whether this call closed it (see
// [Sender.Close]). Values already in the channel stay receivable. Close does
// not release this Receiver.
//
// Close closes the channel for every end, not just this one: every Sender's
// sends fail from then on. It is not the call to defer when this Receiver
// is done with; call [Receiver.Release] for that (defer rx.Release()).
func (r *Receiver[T]) Close() bool { return r.ch().close() }

// Closed returns a channel that is closed when the channel closes, to wait
// on in a select.
func (r *Receiver[T]) Closed() <-chan struct{} { return r.ch().closedCh }

// IsClosed reports whether the channel is closed. A closed channel may
// still hold values to receive.
func (r *Receiver[T]) IsClosed() bool { return r.ch().isClosed() }

// Len returns the number of values in the channel (a snapshot).
func (r *Receiver[T]) Len() int { return r.ch().q.Len() }

// Cap returns the capacity of a bounded channel, or 0 for an unbounded one.
func (r *Receiver[T]) Cap() int { return r.ch().capacity }

// IsEmpty reports whether the channel holds no value (a snapshot).
func (r *Receiver[T]) IsEmpty() bool { return r.ch().q.Len() == 0 }

// IsFull reports whether a bounded channel holds as many values as its
// capacity (a snapshot). An unbounded channel is never full.
func (r *Receiver[T]) IsFull() bool { return r.ch().isFull() }

// SenderCount returns the number of Senders of the channel that have not
// been released.
func (r *Receiver[T]) SenderCount() int { return r.ch().loadSenders() }

// ReceiverCount returns the number of Receivers of the channel that have
// not been released.
func (r *Receiver[T]) ReceiverCount() int { return r.ch().loadReceivers() }
