package mpmc

import (
	"fmt"
	"math/bits"
	"sync/atomic"

	"github.com/shardedsink/shardedsink/ring"
)

// This file holds the two ways a bounded channel's storage refuses a push
// once the channel is closed.
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
// bit in the tail word that every push compare-and-swaps; closableRing
// below is that design on the Vyukov ring. A ring.Ring from BoundedOn has
// no such bit, so guardedRing counts the pushes in flight instead: two more
// atomic read-modify-writes per push.

// closableRing is the ring behind [Bounded]: Dmitry Vyukov's bounded MPMC
// queue as crossbeam's ArrayQueue gives it (the ring/vyukov package is the
// same algorithm), plus concurrent-queue's closed mark (concurrent-queue
// src/bounded.rs): one bit of the tail word, between the index and the lap
// bits, that Close sets with one atomic OR and that every TryPush sees in
// the tail value it compare-and-swaps. A push that succeeds therefore took
// effect before the close, and none can succeed after it.
//
// Stamps: head, tail and each slot's stamp pack lap | mark | index, where
// index < markBit (the smallest power of two above the capacity), markBit is
// the closed mark (only ever set in tail), and laps count in units of
// oneLap = 2*markBit. Slot i's stamp says who may touch its value, as in
// ring/vyukov:
//
//   - stamp == t (t a tail stamp of index i): the slot is empty and belongs
//     to the producer that moves tail from t by compare-and-swap; it writes
//     the value, then stores stamp = t+1, which publishes it.
//   - stamp == h+1 (h a head stamp of index i): the slot is full and belongs
//     to the consumer that moves head from h; it reads and zeroes the value,
//     then stores stamp = h+oneLap for the next lap's producer.
//   - anything else: another goroutine has claimed the slot and not yet
//     published it; everyone else waits.
//
// The stamp store that ends each claim is the happens-before edge that
// makes the plain write (or zeroing) of the value visible to the next
// owner, which loads the stamp first. Go's atomics are sequentially
// consistent, which supplies the fence crossbeam issues before it reads the
// opposite cursor to decide "full" or "empty".
type closableRing[T any] struct {
	slots    []stampedSlot[T]
	markBit  uint64
	oneLap   uint64
	capacity int
	_        [cacheBlock - 24 - 8 - 8 - 8]byte // keep the read-only fields off head's block

	// head is the stamp of the next slot to pop. Only consumers move it.
	head atomic.Uint64
	_    [cacheBlock - 8]byte

	// tail is the stamp of the next slot to push, with the closed mark.
	// Producers move it; Close sets the mark.
	tail atomic.Uint64
	_    [cacheBlock - 8]byte
}

type stampedSlot[T any] struct {
	stamp atomic.Uint64
	value T
}

func newClosableRing[T any](capacity int) *closableRing[T] {
	if capacity < 1 {
		panic(fmt.Sprintf("mpmc: capacity must be at least 1, got %d", capacity))
	}
	markBit := uint64(1) << bits.Len64(uint64(capacity))
	r := &closableRing[T]{
		slots:    make([]stampedSlot[T], capacity),
		markBit:  markBit,
		oneLap:   markBit << 1,
		capacity: capacity,
	}
	for i := range r.slots {
		r.slots[i].stamp.Store(uint64(i))
	}
	return r
}

// next returns the stamp after s (s without the mark): the next index in
// the same lap, or index 0 of the next lap at the end of the array.
func (r *closableRing[T]) next(s uint64) uint64 {
	if s&(r.markBit-1)+1 < uint64(r.capacity) {
		return s + 1
	}
	return s&^(r.oneLap-1) + r.oneLap
}

// TryPush appends v and reports true, or reports false, leaving the ring
// unchanged, when the ring is full or closed. Losing a race is never
// reported as full.
func (r *closableRing[T]) TryPush(v T) bool {
	var b backoff
	tail := r.tail.Load()
	for {
		if tail&r.markBit != 0 {
			return false // closed
		}
		s := &r.slots[tail&(r.markBit-1)]
		stamp := s.stamp.Load()
		switch {
		case stamp == tail:
			// The slot is empty for this lap; claim it by moving tail. The
			// compare-and-swap fails if Close set the mark meanwhile.
			if r.tail.CompareAndSwap(tail, r.next(tail)) {
				s.value = v
				s.stamp.Store(tail + 1) // publish: the consumer loads stamp before value
				return true
			}
			b.spin()
		case stamp+r.oneLap == tail+1:
			// The slot still holds the previous lap's value: full, unless
			// head has moved past it meanwhile.
			if r.head.Load()+r.oneLap == tail {
				return false
			}
			b.spin()
		default:
			// Claimed by another goroutine and not yet published, or tail
			// moved on: wait, never report full.
			b.snooze()
		}
		tail = r.tail.Load()
	}
}

// TryPop removes and returns the oldest value, or returns the zero value and
// false when the ring is empty. The slot is zeroed so that the ring keeps no
// reference to the value.
func (r *closableRing[T]) TryPop() (T, bool) {
	var b backoff
	head := r.head.Load()
	for {
		s := &r.slots[head&(r.markBit-1)]
		stamp := s.stamp.Load()
		switch {
		case stamp == head+1:
			// Full for this lap; claim it by moving head.
			if r.head.CompareAndSwap(head, r.next(head)) {
				v := s.value
				var zero T
				s.value = zero
				s.stamp.Store(head + r.oneLap) // hand the slot to the next lap's producer
				return v, true
			}
			b.spin()
		case stamp == head:
			// Empty for this lap: the ring is empty unless tail has moved.
			if r.tail.Load()&^r.markBit == head {
				var zero T
				return zero, false
			}
			b.spin()
		default:
			// A producer claimed the slot and has not published it, or
			// head moved on: wait, never report empty.
			b.snooze()
		}
		head = r.head.Load()
	}
}

// Len returns the number of values in the ring: a consistent snapshot (tail
// read twice around head) between 0 and Cap.
func (r *closableRing[T]) Len() int {
	for {
		tail := r.tail.Load()
		head := r.head.Load()
		if r.tail.Load() != tail {
			continue
		}
		hix := head & (r.markBit - 1)
		tix := tail & (r.markBit - 1)
		switch {
		case hix < tix:
			return int(tix - hix)
		case hix > tix:
			return r.capacity - int(hix) + int(tix)
		case tail&^r.markBit == head:
			return 0
		default:
			return r.capacity
		}
	}
}

// Cap returns the capacity.
func (r *closableRing[T]) Cap() int { return r.capacity }

// Close sets the closed mark, after which every TryPush fails, and reports
// whether this call set it.
func (r *closableRing[T]) Close() bool {
	return r.tail.Or(r.markBit)&r.markBit == 0
}

// IsClosed reports whether Close has run.
func (r *closableRing[T]) IsClosed() bool { return r.tail.Load()&r.markBit != 0 }

// guardedRing makes any ring.Ring closable: state counts the pushes in
// flight (in units of 2) and carries the closed mark in its low bit. A push
// adds 2 before it pushes and takes 2 away after, and gives up if the add
// returned the mark; Close sets the mark and then waits until no push is in
// flight. When Close returns, every push that will ever succeed has
// returned. The cost is two atomic read-modify-writes per push, on a word
// that all senders share.
type guardedRing[T any] struct {
	ring.Ring[T]
	state atomic.Int64
}

func (g *guardedRing[T]) TryPush(v T) bool {
	if g.state.Add(2)&1 != 0 { // seq-cst: Close's OR and this add are ordered
		g.state.Add(-2)
		return false
	}
	ok := g.Ring.TryPush(v)
	g.state.Add(-2)
	return ok
}

func (g *guardedRing[T]) Close() bool {
	if g.state.Or(1)&1 != 0 {
		return false
	}
	// Wait for the pushes in flight. Each is a TryPush, which does not
	// wait for room, so this ends as soon as they are scheduled.
	var b backoff
	for g.state.Load() != 1 {
		b.snooze()
	}
	return true
}

func (g *guardedRing[T]) IsClosed() bool { return g.state.Load()&1 != 0 }
