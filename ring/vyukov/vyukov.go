// Package vyukov is the default [ring.Ring] backend: Dmitry Vyukov's bounded
// multi-producer multi-consumer queue, in the form crossbeam's ArrayQueue
// gives it (crossbeam-queue/src/array_queue.rs), rendered in Go with
// sync/atomic and no runtime internals.
//
// Producers contend only on the tail cursor and consumers only on the head
// cursor; each cursor sits on its own 128-byte block so that the two sides do
// not share a cache line (nor the adjacent-line pair that Intel CPUs since
// Sandy Bridge fetch together). A successful operation is one compare-and-swap
// on its cursor plus one load and one release store of the claimed slot's
// stamp: one locked instruction on amd64. It allocates nothing.
//
// Unlike rings that give up after one lost compare-and-swap (xsync's
// MPMCQueue, Workiva's RingBuffer), TryPush reports false only when the ring
// is full and TryPop reports false only when it is empty: a lost race is
// retried, and a slot that another goroutine has claimed but not yet published
// is waited for. The price of that guarantee is the one Vyukov's design always
// carries: a goroutine preempted between claiming a slot and publishing it
// makes the next goroutine that needs that very slot wait (spinning, then
// yielding with runtime.Gosched) until it resumes.
package vyukov

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/shardedsink/shardedsink/internal/backoff"
	"github.com/shardedsink/shardedsink/internal/layout"
	"github.com/shardedsink/shardedsink/internal/machine"
	"github.com/shardedsink/shardedsink/ring"
)

// Ring is a bounded MPMC FIFO ring of exactly the capacity given to [New].
// It is safe for concurrent use by any number of goroutines. A Ring must not
// be copied after first use.
//
// Beyond [ring.Ring], a Ring can be closed: after [Ring.Close] every TryPush
// fails, atomically with respect to every push (a push that succeeds took
// effect before the close), while TryPop still returns what is buffered.
// The mpmc channel relies on this; a ring that is never closed behaves as
// the ring contract says, and the check costs a push one test of a bit in a
// word it has already loaded.
//
// # Slot ownership
//
// The ring has capacity slots. Each slot carries a stamp, and head and tail
// are stamps too: a stamp packs a lap number in its high bits and a slot index
// in its low bits (index = stamp & (markBit-1), lap = stamp &^ (oneLap-1)),
// where markBit is the smallest power of two above capacity and oneLap is
// twice that. Because the index never reaches markBit, any capacity >= 1 is
// exact; only the stamp arithmetic, not the slot array, is rounded to a power
// of two. The bit markBit itself is the closed mark (concurrent-queue's
// design, under async-channel): it is only ever set in tail, by Close, and
// every push compare-and-swaps the whole tail word, so no push can succeed
// once it is set.
//
// Slot i's stamp says who may touch its value:
//
//   - stamp == t, where t is a tail stamp with index i: the slot is empty and
//     belongs to the producer that moves tail from t to the next stamp by
//     compare-and-swap. Only that producer writes the value, then stores
//     stamp = t+1, which publishes it.
//   - stamp == h+1, where h is a head stamp with index i: the slot is full and
//     belongs to the consumer that moves head from h to the next stamp by
//     compare-and-swap. Only that consumer reads and zeroes the value, then
//     stores stamp = h+oneLap, which hands the slot to the producer of the next
//     lap.
//   - anything else: some goroutine has claimed the slot (moved the cursor)
//     but not yet published it; the value belongs to that goroutine and
//     everyone else waits.
//
// The stamp store that ends each claim is the happens-before edge that makes
// the plain write (or zeroing) of the value visible to the next owner, which
// loads the stamp (atomic.LoadUint64, an acquire load) before touching the
// value. It needs release ordering only, as in crossbeam, and is
// machine.StoreRelease: a plain MOV on amd64, where atomic.StoreUint64 would
// be a locked XCHG, so a successful push or pop holds one locked
// instruction, its compare-and-swap (internal/machine explains why that is
// sound, and internal/hotpath's test counts them). The decisions "full" and
// "empty" read the opposite cursor after the stamp; a cursor moves only by
// a compare-and-swap, which is globally ordered, so a publish that is not
// yet visible can only make a reader wait for the slot, never report full
// or empty wrongly. Where crossbeam issues a SeqCst fence before that read,
// Go's loads are already sequentially consistent. Dekker pairs built on a
// push (the sink's sleeping flag, the channel's waiter count) pair with the
// tail's compare-and-swap, never with the stamp store.
//
// # Atomics
//
// head, tail and the stamps are plain uint64 fields used only through
// sync/atomic's functions (atomic.LoadUint64, atomic.CompareAndSwapUint64,
// ...), never as atomic.Uint64 with its methods. The ring is generic, so
// its methods are compiled in the package that instantiates it, and there
// the methods of sync/atomic's types are inlined only if that package
// imports sync/atomic itself; otherwise each one is a call (a push cost 9.4
// ns instead of 6.0 in a user's program). The functions are compiler
// intrinsics in every package. internal/hotpath's test checks the
// assembly of a program that imports only the library. The zero-length
// atomic.Uint64 arrays before the fields keep them 8-byte aligned on 32-bit
// platforms, as atomic.Uint64 did; a test checks the offsets, and CI runs
// the tests under GOARCH=386.
type Ring[T any] struct {
	_ layout.NoCopy

	slots    []slot[T]
	markBit  uint64 // the closed mark in tail; index bits are below it
	oneLap   uint64 // 2*markBit: one lap of stamps
	capacity int
	_        [layout.CacheLine - unsafe.Sizeof([]byte(nil)) - 8 - 8 - unsafe.Sizeof(0)]byte // keep the read-only fields off head's block

	// head is the stamp of the next slot to pop. Only consumers move it.
	_    [0]atomic.Uint64 // 8-byte alignment for head on 32-bit platforms
	head uint64
	_    [layout.CacheLine - 8]byte

	// tail is the stamp of the next slot to push, with the closed mark.
	// Producers move it; Close sets the mark.
	_    [0]atomic.Uint64 // 8-byte alignment for tail on 32-bit platforms
	tail uint64
	_    [layout.CacheLine - 8]byte
}

// slot is one cell of the ring. Its stamp is first and the zero-length
// array of atomic.Uint64 gives the struct 8-byte alignment, so every
// element's stamp of a []slot is 8-byte aligned on 32-bit platforms too.
type slot[T any] struct {
	_     [0]atomic.Uint64
	stamp uint64
	value T
}

// New returns an empty ring that holds exactly capacity values. It panics if
// capacity is below 1.
func New[T any](capacity int) *Ring[T] {
	if capacity < 1 {
		panic(fmt.Sprintf("vyukov: capacity must be at least 1, got %d", capacity))
	}
	markBit := uint64(1) << bits.Len64(uint64(capacity))
	r := &Ring[T]{
		slots:    make([]slot[T], capacity),
		markBit:  markBit,
		oneLap:   markBit << 1,
		capacity: capacity,
	}
	for i := range r.slots {
		atomic.StoreUint64(&r.slots[i].stamp, uint64(i))
	}
	return r
}

// Factory returns New(capacity) as a [ring.Ring]; vyukov.Factory[T] is a
// [ring.Factory].
func Factory[T any](capacity int) ring.Ring[T] { return New[T](capacity) }

// next returns the stamp after s (s without the closed mark): the next index
// in the same lap, or index 0 of the next lap at the end of the array.
func (r *Ring[T]) next(s uint64) uint64 {
	if s&(r.markBit-1)+1 < uint64(r.capacity) {
		return s + 1
	}
	return s&^(r.oneLap-1) + r.oneLap
}

// TryPush appends v and reports true, or reports false and leaves the ring
// unchanged when it is full (or closed). It never fails because of
// contention. It does not allocate.
func (r *Ring[T]) TryPush(v T) bool {
	var b backoff.Backoff
	tail := atomic.LoadUint64(&r.tail)
	for {
		if tail&r.markBit != 0 {
			return false // closed
		}
		s := &r.slots[tail&(r.markBit-1)]
		stamp := atomic.LoadUint64(&s.stamp)
		switch {
		case stamp == tail:
			// The slot is empty for this lap; claim it by moving tail. The
			// compare-and-swap fails if Close set the mark meanwhile.
			if atomic.CompareAndSwapUint64(&r.tail, tail, r.next(tail)) {
				s.value = v
				machine.StoreRelease(&s.stamp, tail+1) // publish: the consumer loads stamp before value
				return true
			}
			b.Spin()
			tail = atomic.LoadUint64(&r.tail)
		case stamp+r.oneLap == tail+1:
			// The slot still holds the previous lap's value. The ring is
			// full only if head has not moved past that value; if it has,
			// a consumer claimed the slot and has not handed it on: wait
			// for it, yielding if it takes long (it may be preempted).
			if atomic.LoadUint64(&r.head)+r.oneLap == tail {
				return false
			}
			b.Snooze()
			tail = atomic.LoadUint64(&r.tail)
		default:
			// Another goroutine claimed the slot and has not published it,
			// or tail moved on: wait, never report full.
			b.Snooze()
			tail = atomic.LoadUint64(&r.tail)
		}
	}
}

// ForcePush appends v even when the ring is full: it then takes the oldest
// value out to make room, in one step, and returns it with displaced true
// (crossbeam's ArrayQueue::force_push). ok is false only when the ring is
// closed; v was not appended then (but a value may still have been
// displaced, if Close came in the middle). Every value pushed is either
// popped later or returned by exactly one ForcePush as displaced. It never
// fails because of contention and does not allocate.
func (r *Ring[T]) ForcePush(v T) (old T, displaced, ok bool) {
	var b backoff.Backoff
	tail := atomic.LoadUint64(&r.tail)
	for {
		if tail&r.markBit != 0 {
			return old, false, false // closed
		}
		s := &r.slots[tail&(r.markBit-1)]
		stamp := atomic.LoadUint64(&s.stamp)
		switch {
		case stamp == tail:
			if atomic.CompareAndSwapUint64(&r.tail, tail, r.next(tail)) {
				s.value = v
				machine.StoreRelease(&s.stamp, tail+1)
				return old, false, true
			}
			b.Spin()
		case stamp+r.oneLap == tail+1:
			// Full: the slot holds the oldest value, and head sits on it one
			// lap behind tail. Claim it as a pop would, by moving head past
			// it; while the ring is full no producer can move tail, so only
			// Close can change tail before the swap below.
			head := tail - r.oneLap
			if atomic.CompareAndSwapUint64(&r.head, head, r.next(head)) {
				old = s.value // the stamp load above ordered the old write before this read
				if !atomic.CompareAndSwapUint64(&r.tail, tail, r.next(tail)) {
					// Close set the mark in between: finish as a pop, so
					// that the ring stays consistent, and hand back old.
					var zero T
					s.value = zero
					machine.StoreRelease(&s.stamp, head+r.oneLap)
					return old, true, false
				}
				s.value = v
				machine.StoreRelease(&s.stamp, tail+1) // publish v for this lap's consumer
				return old, true, true
			}
			// A consumer moved head first: it has claimed the slot, and
			// the ring has room once it hands the slot on. Wait for that
			// as TryPush does.
			b.Snooze()
		default:
			b.Snooze()
		}
		tail = atomic.LoadUint64(&r.tail)
	}
}

// TryPop removes and returns the oldest value, or returns the zero value and
// false when the ring is empty. It never fails because of contention. The
// slot is zeroed so that the ring keeps no reference to the value. It does
// not allocate.
func (r *Ring[T]) TryPop() (T, bool) {
	var b backoff.Backoff
	head := atomic.LoadUint64(&r.head)
	for {
		s := &r.slots[head&(r.markBit-1)]
		stamp := atomic.LoadUint64(&s.stamp)
		switch {
		case stamp == head+1:
			// The slot is full for this lap; claim it by moving head.
			if atomic.CompareAndSwapUint64(&r.head, head, r.next(head)) {
				v := s.value
				var zero T
				s.value = zero
				machine.StoreRelease(&s.stamp, head+r.oneLap) // hand the slot to the next lap's producer
				return v, true
			}
			b.Spin()
			head = atomic.LoadUint64(&r.head)
		case stamp == head:
			// The slot is empty for this lap. The ring is empty only if
			// tail has not moved past it; if it has, a producer claimed
			// the slot and has not published it: wait, yielding if it
			// takes long.
			if atomic.LoadUint64(&r.tail)&^r.markBit == head {
				var zero T
				return zero, false
			}
			b.Snooze()
			head = atomic.LoadUint64(&r.head)
		default:
			// A producer claimed the slot and has not published it yet, or
			// head moved on: wait, never report empty.
			b.Snooze()
			head = atomic.LoadUint64(&r.head)
		}
	}
}

// Len returns the number of values in the ring. It reads tail, head and
// tail again until the two tail reads agree, so the result is a consistent
// snapshot between 0 and Cap. A ForcePush that displaces counts as one
// step: between its moves of head and tail, when the cursors alone would
// count one value less, the stamp of tail's slot shows that the slot still
// holds the displaced value, and Len reports Cap (a pop of that value still
// in flight is counted the same way: it has not returned yet). Len reads
// that stamp, between the two tail reads, only when the cursors count Cap-1
// values: a ring's slot under tail is a line of its own, and the rings of a
// sink, allocated a ring's size apart, put those lines in one cache set, so
// that Sink.Stats, which calls Len on every shard, would miss on each.
func (r *Ring[T]) Len() int {
	for {
		tail := atomic.LoadUint64(&r.tail)
		head := atomic.LoadUint64(&r.head)
		t := tail &^ r.markBit
		hix := head & (r.markBit - 1)
		tix := t & (r.markBit - 1)
		var n int
		switch {
		case hix < tix:
			n = int(tix - hix)
		case hix > tix:
			n = r.capacity - int(hix) + int(tix)
		case t == head:
			n = 0
		default:
			n = r.capacity
		}
		// Head is one value past full, and the slot under tail still has
		// the previous lap's stamp: its value was claimed (by ForcePush
		// between its two moves, or by a pop) and not yet handed on.
		displacing := false
		if n == r.capacity-1 {
			stamp := atomic.LoadUint64(&r.slots[tix].stamp)
			displacing = stamp+r.oneLap == t+1
		}
		if atomic.LoadUint64(&r.tail) != tail {
			continue
		}
		if displacing {
			return r.capacity
		}
		return n
	}
}

// Cap returns the capacity the ring was created with.
func (r *Ring[T]) Cap() int { return r.capacity }

// Close marks the ring closed and reports whether this call did. From then
// on every TryPush fails; TryPop still returns the values buffered. It is
// one atomic OR on the tail word, so every push that succeeds took effect
// before the close, and none after. A closed ring stays closed.
func (r *Ring[T]) Close() bool {
	return atomic.OrUint64(&r.tail, r.markBit)&r.markBit == 0
}

// IsClosed reports whether [Ring.Close] has been called.
func (r *Ring[T]) IsClosed() bool { return atomic.LoadUint64(&r.tail)&r.markBit != 0 }
