package mpmc

import (
	"sync"
	"sync/atomic"

	"github.com/shardedsink/shardedsink/internal/backoff"
	"github.com/shardedsink/shardedsink/internal/layout"
	"github.com/shardedsink/shardedsink/ring"
)

// This file holds the two ways a bounded channel's storage refuses a push
// once the channel is closed: a ring that closes itself ([ClosableRing]),
// and the counted guard that the channel puts around any other ring.
//
// Why the channel cannot just check a closed flag before it pushes: a send
// that reads the flag as open and is then delayed (preempted) before its
// push can push after Close has returned, into room that a receive, or the
// last receiver's drain, made after the close. The send then returns nil
// for a value that either sits in a closed channel whose receivers may
// already have seen ErrClosed and left, or is dropped by the drain. (The
// close-race stress test caught exactly that: a Send returned nil after the
// last receiver's Release.) Closing has to be one atomic step with respect
// to every push. concurrent-queue, under async-channel, does it with a mark
// bit in the tail word that every push compare-and-swaps, and the vyukov
// ring behind [Bounded] has that design (vyukov.Ring.Close). A ring.Ring from
// BoundedOn that does not implement ClosableRing gets guardedRing below,
// which counts the pushes in flight instead: two more atomic
// read-modify-writes per push (and per pop, for ForcePush). Whether a ring closes itself is never
// guessed from its method names: a ring with a Close that only sets a flag
// which its TryPush checks would bring the race above back.

// ClosableRing is a [ring.Ring] that the channel can close itself, with
// the contract the channel relies on. [BoundedOn] uses such a ring as it
// is; any other ring gets a guard that counts the pushes and the pops in
// flight (two more atomic read-modify-writes per send, on a word all
// senders share, and two per receive, on the receivers' word).
// *vyukov.Ring implements it.
type ClosableRing[T any] interface {
	ring.Ring[T]

	// Close makes the ring refuse every later push, and reports whether
	// this call did: true the first time only. It must be one atomic step
	// with respect to every TryPush and ForcePush: each push either takes
	// effect before Close, and then its value is in the ring (TryPop finds
	// it) by the time Close returns, or fails and leaves the ring
	// unchanged. In particular a push that starts after Close has returned
	// fails, and so does one that overlaps Close but did not take effect
	// before it. A TryPush that checks a closed flag and then pushes does
	// not meet this: it can push after Close returned. TryPop keeps
	// returning the values left after Close.
	Close() bool

	// IsClosed reports whether Close has been called.
	IsClosed() bool

	// ForcePush appends v; when the ring is full it first takes the
	// oldest value out, and returns it with displaced true. Taking the
	// value out and appending v must be one step with respect to every
	// other push: the room it makes is v's alone. ok is false, and v was
	// not appended, only when the ring is closed (a value displaced by a
	// ForcePush that Close interrupted is still returned).
	ForcePush(v T) (old T, displaced, ok bool)
}

// The bits of guardedRing.state and guardedRing.pops.
const (
	guardClosed  = 1 // set by Close in state: every push that has not added its count fails
	guardForcing = 2 // a ForcePush has the ring to itself: pushes (state) and pops (pops) wait
	guardPush    = 4 // the unit of the counts of pushes (state) and pops (pops) in flight
)

// guardedRing makes any ring.Ring closable, and gives it a ForcePush whose
// displacement and push are one step with respect to every other push and
// pop.
//
// state counts the pushes in flight (in units of guardPush) and carries the
// guardClosed and guardForcing bits. A push loads state and gives up at
// once if the closed mark is set (so that goroutines retrying a send on a
// closed channel never touch the count, and cannot keep Close waiting);
// otherwise it adds guardPush, and backs out if the add returned a mark.
// It takes guardPush away after its push. Close sets the mark and then
// waits until no push is in flight; so when Close returns, every push that
// will ever succeed has returned.
//
// pops counts the pops in flight the same way, on a block of its own, and
// carries guardForcing too. ForcePush takes the ring to itself: under force
// (which orders ForcePush calls) it sets guardForcing in both words, waits
// until no push and no pop is in flight, then pushes, or pops the oldest
// value and pushes, with no other goroutine able to touch the ring, and
// clears the bits. A push or pop that meets guardForcing waits (spinning,
// then yielding) until it is clear. Pops are held off too because a pop
// between ForcePush's failed push and its pop would make room, and
// ForcePush would then displace a value from a channel that was not full.
// The price: a receive costs two more atomic read-modify-writes, as a send
// does.
type guardedRing[T any] struct {
	ring.Ring[T]
	_     [0]atomic.Int64 // gives state 8-byte alignment on 32-bit platforms too (see channel)
	state int64           // used only through sync/atomic's functions
	_     [layout.CacheLine - 8]byte

	_    [0]atomic.Int64 // 8-byte alignment, as for state
	pops int64           // used only through sync/atomic's functions
	// displacing is odd while a ForcePush has popped the oldest value
	// and not yet pushed its own; Len counts the ring full then.
	displacing uint64
	force      sync.Mutex // orders ForcePush calls
}

func (g *guardedRing[T]) TryPush(v T) bool {
	var b backoff.Backoff
	for {
		s := atomic.LoadInt64(&g.state)
		if s&guardClosed != 0 {
			return false // closed: no add, see the type's comment
		}
		if s&guardForcing == 0 {
			// seq-cst: Close's OR and this add are ordered; a push whose
			// add came first is waited for, one whose add came after sees
			// the mark.
			if s = atomic.AddInt64(&g.state, guardPush); s&(guardClosed|guardForcing) == 0 {
				break
			}
			atomic.AddInt64(&g.state, -guardPush)
			if s&guardClosed != 0 {
				return false
			}
		}
		b.Snooze() // a ForcePush holds the ring
	}
	ok := g.Ring.TryPush(v)
	atomic.AddInt64(&g.state, -guardPush)
	return ok
}

func (g *guardedRing[T]) TryPop() (T, bool) {
	var b backoff.Backoff
	// seq-cst: ForcePush's OR and this add are ordered; a pop whose add
	// came first is waited for, one whose add came after sees the bit.
	for atomic.AddInt64(&g.pops, guardPush)&guardForcing != 0 {
		atomic.AddInt64(&g.pops, -guardPush)
		for atomic.LoadInt64(&g.pops)&guardForcing != 0 {
			b.Snooze() // a ForcePush holds the ring
		}
	}
	v, ok := g.Ring.TryPop()
	atomic.AddInt64(&g.pops, -guardPush)
	return v, ok
}

func (g *guardedRing[T]) ForcePush(v T) (old T, displaced, ok bool) {
	if g.TryPush(v) {
		return old, false, true
	}
	g.force.Lock()
	defer g.force.Unlock()
	if atomic.OrInt64(&g.state, guardForcing)&guardClosed != 0 {
		atomic.AndInt64(&g.state, ^guardForcing)
		return old, false, false
	}
	atomic.OrInt64(&g.pops, guardForcing)
	// Wait for the pushes and pops in flight; no new one starts while the
	// bits are set. Each is a TryPush or TryPop, which does not wait for
	// room or values, so this ends as soon as they are scheduled. A Close
	// meanwhile waits for this ForcePush, whose push takes effect before
	// the close.
	var b backoff.Backoff
	for atomic.LoadInt64(&g.state)&^(guardClosed|guardForcing) != 0 || atomic.LoadInt64(&g.pops) != guardForcing {
		b.Snooze()
	}
	// Only this goroutine touches the ring now. If the push fails, the
	// ring is full, and stays full until the push below: one pop makes
	// room that nobody else can take.
	if !g.Ring.TryPush(v) {
		atomic.AddUint64(&g.displacing, 1)
		old, displaced = g.Ring.TryPop()
		if !displaced || !g.Ring.TryPush(v) {
			panic("mpmc: the ring given to BoundedOn refused a push, then a pop or a push after a pop, with no other goroutine using it: it breaks the ring.Ring contract")
		}
		atomic.AddUint64(&g.displacing, 1)
	}
	atomic.AndInt64(&g.pops, ^guardForcing)
	atomic.AndInt64(&g.state, ^guardForcing)
	return old, displaced, true
}

// Len is the ring's Len, except while a ForcePush displaces: between its
// pop and its push the ring holds one value less, and Len reports Cap, as
// the ring holds before and after that step. A ForcePush that displaces
// started from a full ring that only it could touch, so a Len call that
// overlaps any part of the step may count the ring full.
func (g *guardedRing[T]) Len() int {
	d := atomic.LoadUint64(&g.displacing)
	n := g.Ring.Len()
	if d&1 != 0 || atomic.LoadUint64(&g.displacing) != d {
		return g.Ring.Cap()
	}
	return n
}

func (g *guardedRing[T]) Close() bool {
	if atomic.OrInt64(&g.state, guardClosed)&guardClosed != 0 {
		return false
	}
	// Wait for the pushes in flight, and for a ForcePush that holds the
	// ring. Each is bounded: none of them waits for room.
	var b backoff.Backoff
	for atomic.LoadInt64(&g.state) != guardClosed {
		b.Snooze()
	}
	return true
}

func (g *guardedRing[T]) IsClosed() bool { return atomic.LoadInt64(&g.state)&guardClosed != 0 }
