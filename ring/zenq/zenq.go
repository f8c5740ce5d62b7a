//go:build zenq

package zenq

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	upstream "github.com/alphadose/zenq/v2"

	"github.com/shardedsink/shardedsink/internal/layout"
	"github.com/shardedsink/shardedsink/ring"
)

// MaxCapacity is the largest capacity [New] accepts: zenq's ring has at most
// 2^16 slots.
const MaxCapacity = 1 << 16

// Counter word layout: used in the low 32 bits, ready in the high 32 bits.
// Neither count exceeds MaxCapacity, so neither carries into the other.
const (
	usedOne       = uint64(1)       // adds one to used
	readyOne      = uint64(1) << 32 // adds one to ready
	usedMinusOne  = ^(usedOne - 1)  // adding it subtracts one from used
	readyMinusOne = ^(readyOne - 1) // adding it subtracts one from ready
)

// Ring is a [ring.Ring] over a zenq queue. It is safe for concurrent use by
// any number of goroutines. A Ring must not be copied after first use.
//
// # Why the counters keep zenq from blocking
//
// Write with ticket w uses slot w mod size; it parks if that slot still holds
// the value of ticket w-size, which reader w-size has not taken. Read with
// ticket r uses slot r mod size and waits until writer r has committed its
// value there. The adapter admits operations so that neither case lasts:
//
//   - used never exceeds capacity <= size. Writer w reserved before taking
//     its ticket, as did every writer before it, so when w takes its ticket
//     at least w reservations precede it in the order of atomics; at most
//     capacity of them are outstanding, so at least w-capacity >= w-size
//     pops have lowered used before it. A pop lowers used only after its Read
//     has emptied the slot (and the adapter has zeroed it), and Reads run one
//     at a time in ticket order, so reader w-size has emptied slot w mod
//     size: writer w finds it empty and never parks.
//   - ready counts the pushes that have reserved and that no pop has claimed.
//     The pop that claims the r-th unit takes zenq ticket r (claims and
//     tickets are taken in the same order, under the mutex); at least r
//     pushes have reserved by then, each of them takes a writer ticket
//     without waiting, so writer r exists or is on its way, and Read waits
//     only for that push to run the few instructions up to its commit (zenq's
//     Read yields the processor while it waits, so a descheduled pusher gets
//     to run).
//
// FIFO follows: writer ticket t's value is read by reader ticket t, and
// tickets are handed out in the order the Write calls take effect.
type Ring[T any] struct {
	_ layout.NoCopy

	// Read-only after New.
	q        *upstream.ZenQ[T]
	slots    slotArray[T] // zenq's slot array, to zero what Read leaves behind
	capacity uint32
	_        [layout.CacheLine - 8 - 24 - 8]byte // keep them off count's block

	// count packs used and ready (see usedOne and readyOne). Every
	// operation that changes it is a sequentially consistent atomic, and the
	// argument above relies on that single order. Producers and consumers
	// both write it, so it gets a 128-byte block of its own (a pair of cache
	// lines, which x86-64 prefetches together).
	count atomic.Uint64
	_     [layout.CacheLine - 8]byte

	// pushMu serialises pushes: the reservation and the whole Write (which
	// takes zenq's writer ticket) happen under it, so reservations and
	// writer tickets follow one order. Without it a push could reserve
	// first and take its ticket after a later push's, and Len, the full
	// check and the pops' claims (all counted in reservations) would then
	// disagree with zenq's order: the conformance kit's linearizability
	// check found such a history (Len 1 after one push had started, then a
	// later push's value popped first).
	pushMu sync.Mutex
	_      [layout.CacheLine - 8]byte

	// popMu serialises pops: the claim of a ready unit, the Read and the
	// zeroing of the slot happen under it, so claims, reader tickets and
	// completed Reads all follow one order.
	popMu sync.Mutex
	reads uint64 // zenq reader tickets taken so far; guarded by popMu
}

// New returns an empty ring that holds exactly capacity values, backed by a
// zenq queue of the next power of two. It panics if capacity is below 1 or
// above [MaxCapacity], or if the zenq module is not the v2.8.4 whose internal
// layout the adapter reads. Every call leaks one parked goroutine; see the
// package documentation.
func New[T any](capacity int) *Ring[T] {
	if capacity < 1 {
		panic(fmt.Sprintf("zenq: capacity must be at least 1, got %d", capacity))
	}
	if capacity > MaxCapacity {
		panic(fmt.Sprintf("zenq: capacity must be at most %d (zenq rings have at most 2^16 slots), got %d",
			MaxCapacity, capacity))
	}
	q := upstream.New[T](uint32(capacity))
	slots := slotsOf(q)
	if slots.len() < capacity {
		panic(fmt.Sprintf("zenq: zenq.New(%d) made only %d slots", capacity, slots.len()))
	}
	return &Ring[T]{q: q, slots: slots, capacity: uint32(capacity)}
}

// Factory returns New(capacity) as a [ring.Ring]; zenq.Factory[T] is a
// [ring.Factory].
func Factory[T any](capacity int) ring.Ring[T] { return New[T](capacity) }

// TryPush appends v and reports true, or reports false and leaves the ring
// unchanged when it is full. It never fails because of contention; when the
// ring is full only because a pop is still under way, it waits for that pop.
func (r *Ring[T]) TryPush(v T) bool {
	r.pushMu.Lock()
	defer r.pushMu.Unlock()
	for spins := 0; ; {
		c := r.count.Load()
		used, ready := uint32(c), uint32(c>>32)
		if used < r.capacity {
			// Reserve a place and announce the value in one step, so a
			// pop never sees ready > used. The compare-and-swap can lose
			// only to a pop (pushes hold pushMu); it is retried: the ring
			// was not full.
			if r.count.CompareAndSwap(c, c+usedOne+readyOne) {
				break
			}
			continue
		}
		if ready == r.capacity {
			// capacity values pushed or being pushed, none claimed: full.
			return false
		}
		// used is at capacity only because a pop has claimed a value and
		// not yet lowered used: not full, wait for that pop.
		spins++
		if spins > 4 {
			runtime.Gosched()
		}
	}
	// Never parks: see "Why the counters keep zenq from blocking" above.
	// The queue is never closed, so the result is always false. Still under
	// pushMu, so this Write's ticket follows the reservation order.
	r.q.Write(v)
	return true
}

// TryPop removes and returns the oldest value, or returns the zero value and
// false when the ring is empty. It never fails because of contention. The
// slot is zeroed so that the ring keeps no reference to the value.
func (r *Ring[T]) TryPop() (T, bool) {
	var zero T
	if r.count.Load() < readyOne {
		// ready == 0: every push has been claimed by a pop that started
		// before this load and will take an earlier reader ticket, so the
		// ring was empty at this instant.
		return zero, false
	}
	r.popMu.Lock()
	if r.count.Load() < readyOne {
		r.popMu.Unlock()
		return zero, false
	}
	// Only pops lower ready, and they hold popMu, so ready stays positive
	// until this subtraction: claim one value.
	r.count.Add(readyMinusOne)
	// Reader ticket r.reads+1 reads what writer ticket r.reads+1 wrote; that
	// push has reserved, so Read waits at most for it to finish.
	v, _ := r.q.Read()
	r.reads++
	// Read copied the value but left it in the slot. Reader tickets run
	// one at a time, so the slot is r.reads mod size. The writer a lap
	// ahead (ticket r.reads+size) needs at least r.reads lowerings of used,
	// and the earlier pops account for r.reads-1: it waits for this pop's,
	// below, or a later pop's, which starts after the Unlock. So the slot is
	// still ours.
	r.slots.clear(r.reads)
	r.popMu.Unlock()
	// Give the place back: the slot is empty and zeroed.
	r.count.Add(usedMinusOne)
	return v, true
}

// Len returns the number of values in the ring, counting pushes that are
// under way and not values that a pop has claimed. It is between 0 and Cap;
// under concurrency it is a snapshot.
func (r *Ring[T]) Len() int { return int(r.count.Load() >> 32) }

// Cap returns the capacity the ring was created with.
func (r *Ring[T]) Cap() int { return int(r.capacity) }

// Close empties the ring, dropping the values it holds, so that zenq's slot
// array, which zenq's selectSender goroutine keeps reachable after the Ring is
// gone, refers to none of them. It cannot stop that goroutine: nothing can
// (see the package documentation). Values pushed while Close runs may
// remain; the ring stays usable, and closing twice is harmless.
func (r *Ring[T]) Close() {
	for {
		if _, ok := r.TryPop(); !ok {
			return
		}
	}
}

// slotArray is a view of zenq's slot array, used only to zero slots that Read
// has emptied.
type slotArray[T any] struct {
	base   unsafe.Pointer // &contents[0]
	stride uintptr        // size of one slot
	mask   uint64         // number of slots - 1
}

func (s slotArray[T]) len() int { return int(s.mask) + 1 }

// clear zeroes the value in the slot of ticket t. The caller must own that
// slot: zenq has emptied it and no writer can reach it yet.
func (s slotArray[T]) clear(t uint64) {
	p := (*slot[T])(unsafe.Add(s.base, uintptr(t&s.mask)*s.stride))
	var zero T
	p.item = zero
}
