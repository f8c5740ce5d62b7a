package sink

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/shardedsink/shardedsink/internal/layout"
	"github.com/shardedsink/shardedsink/ring"
)

// shard is one ring with the state around it. Its fields fall into three
// groups, each alone on its own 128-byte block, so that no two groups (and
// no two shards) share a cache line:
//
//   - the producer block, which every push reads: the ring, the doorbell and
//     the sleeping flag. Producers only read it while the worker is busy; it
//     is written when the worker falls asleep or wakes, and by the one
//     producer that clears the flag to ring the doorbell.
//   - the full-ring drop counter, written by producers only when a push
//     is rejected, the byte counter of MaxQueuedBytes (written by
//     every push only when that is set), and the pointers to the rare paths
//     (DropOldest's ForcePush, the byte budget, and the counters of drops
//     with a reason of their own) and to the sink next to them.
//   - the consumer block: the consumer mutex, the handed counter, the
//     batch sequence number and the drain-panic counter, touched only by
//     drain workers, Flush and Stats.
//
// A shard is 384 bytes, three 128-byte strides, and each group is at most 32
// bytes at the start of its stride. The shards of a sink live in one slice,
// which Go does not align to 128 bytes (objects over 512 bytes that hold
// pointers start 8 bytes into their allocation, after a header), but as long
// as the slice starts less than 96 bytes past a 128-byte boundary (with Go's
// size classes it starts 0, 8 or 72 bytes past one), every group still has
// its 128-byte block to itself. A test checks this for 1 to 8 shards.
//
// # Atomics
//
// The fields that producers touch (sleeping, full) are plain integers
// used only through sync/atomic's functions, in the small methods below.
// A shard is generic, so its code is compiled in the package that
// instantiates the sink, and there the methods of sync/atomic's types
// (atomic.Uint32.Load, ...) are calls unless that package imports
// sync/atomic; the functions are intrinsics everywhere (see
// internal/hotpath, whose test reads the assembly of a program that
// imports only the library). The zero-length atomic.Uint64 array before
// full keeps it 8-byte aligned on 32-bit platforms.
type shard[T any] struct {
	// ring is read-only after New.
	ring ring.Ring[T]
	// doorbell has one slot. A producer that clears sleeping sends on it
	// without blocking; the sleeping worker receives.
	doorbell chan struct{}
	// sleeping is 1 while the worker is, or is about to be, parked on the
	// doorbell (IdleWake only); worker.park has the Dekker pair it forms
	// with the ring.
	// It is a plain uint32 used only through isSleeping, setSleeping and
	// wake, as full is used only through countFull and fullCount: see
	// shard's "Atomics" note.
	sleeping uint32
	_        [layout.CacheLine - 2*unsafe.Sizeof(uintptr(0)) - unsafe.Sizeof(uintptr(0)) - 4]byte // interface, chan, flag

	// full counts the pushes refused because every ring they tried was
	// full in slots, before Shutdown began: the drops with no reason of
	// their own. Each drop adds one to exactly one counter, its reason's
	// (see drops.go), so every count only grows and Stats' Dropped, their
	// sum, never goes back. Producers add to it only on rejection; the
	// monitor and Stats load it. Relaxed ordering would do; Go offers only
	// sequentially consistent atomics, which cost the same on x86 for an
	// add.
	_    [0]atomic.Uint64 // 8-byte alignment for full on 32-bit platforms
	full uint64
	// held is the bytes of this shard's values in its ring and in batches
	// whose Drain has not returned (MaxQueuedBytes only; see budget). A
	// push adds its value's size before it pushes; the worker that drained
	// the value gives it back. Used only through sync/atomic's functions.
	held int64
	// slow is nil for DropNewest without a byte budget, where a refused
	// push counts its drop inline; else it holds what the rarer paths
	// need (see refused). Read-only after New, and read only by a push
	// that its ring refused.
	slow *slowPath[T]
	// sink is the shard's sink, read-only after New: a refused push loads
	// its phase (see shed), and nothing else reads it.
	sink *Sink[T]
	_    [layout.CacheLine - 8 - 8 - 2*unsafe.Sizeof(uintptr(0))]byte // counters, pointers

	// mu serialises the consumers of this ring: the home worker locks it for
	// each burst, a stealer takes it with TryLock and skips the shard when it
	// is busy, and Flush and Stats lock it to read the shard's ledger
	// (ledger.go) as one instant's. Producers never touch it.
	mu sync.Mutex
	// handed is the ledger's count of this sink's values handed to a
	// batch, from the ring or the spill tier (ledger.go). It is only
	// added to while mu is held, after the values were taken.
	handed atomic.Uint64
	// seq is the home worker's batch number, and its parity the rule
	// Flush relies on: odd from before the worker's first pop of a round
	// until its batch has been drained and cleared (or found empty), even
	// otherwise; so "seq odd, then pops, then handed counter", all by the
	// worker, and a Flush that saw a pop through handed sees that odd
	// value or a later one. A batch held for MaxDelay keeps it odd across
	// rounds. Only worker.beginRound and worker.endRound change it.
	seq atomic.Uint64
	// panics counts the Drain calls of the home worker that panicked or
	// called runtime.Goexit. Only that worker adds to it; Stats loads it.
	panics atomic.Uint64
	_      [layout.CacheLine - 8 - 8 - 8 - 8]byte // mutex, handed, seq, panics
}

// wake rings the doorbell of a sleeping worker. Of all the producers that see
// the flag set, only the one whose compare-and-swap clears it sends, and the
// send never blocks: the channel has one slot, and a token already in it
// wakes the worker just as well.
//
//go:noinline
func (sh *shard[T]) wake() {
	if atomic.CompareAndSwapUint32(&sh.sleeping, 1, 0) {
		select {
		case sh.doorbell <- struct{}{}:
		default:
		}
	}
}

// isSleeping reports whether the shard's worker is, or is about to be,
// parked on the doorbell.
func (sh *shard[T]) isSleeping() bool { return atomic.LoadUint32(&sh.sleeping) != 0 }

// setSleeping stores the sleeping flag (the worker's side of the Dekker
// pair; see worker.park).
func (sh *shard[T]) setSleeping(on bool) {
	var v uint32
	if on {
		v = 1
	}
	atomic.StoreUint32(&sh.sleeping, v)
}

// countFull records one push refused for a full ring.
func (sh *shard[T]) countFull() { atomic.AddUint64(&sh.full, 1) }

// countForBytes records one push that the byte budget refused. Only a
// shard with a byte budget, and so a slow path, refuses for bytes.
func (sh *shard[T]) countForBytes() { atomic.AddUint64(&sh.slow.forBytes, 1) }

// fullCount returns the pushes refused for a full ring so far.
func (sh *shard[T]) fullCount() uint64 { return atomic.LoadUint64(&sh.full) }
