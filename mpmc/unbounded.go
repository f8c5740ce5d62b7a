package mpmc

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/shardedsink/shardedsink/internal/backoff"
	"github.com/shardedsink/shardedsink/internal/layout"
	"github.com/shardedsink/shardedsink/internal/machine"
)

// This file is the queue behind [Unbounded]: a segmented queue without
// locks, the algorithm of crossbeam's SegQueue and of
// smol-rs/concurrent-queue's unbounded queue (the queue under
// async-channel), rendered in Go.
//
// It takes no lock, but it is not lock-free in the strict sense: a
// producer that claims a block's last slot makes the other producers wait
// (spin, then yield) until it has installed the next block, and a consumer
// waits for the value of a slot that a producer has claimed but not yet
// written, and the consumer of a block's last slot for the next block's
// link. If the goroutine waited for is preempted, the others spin and
// yield until it runs again.
//
// Values live in blocks of segBlockCap slots linked into a list. Producers
// claim positions by compare-and-swap on the tail index, consumers on the
// head index; both indices count positions, segLap of them per block, the
// last of which (offset segBlockCap) is a sentinel that nobody claims: an
// index resting on it means "the next block is being installed, wait".
//
// # Reusing blocks
//
// A block whose every slot has been read goes to a spare place, and the
// producer that needs the next block takes a spare before it allocates. A
// queue keeps up to segSpares spare blocks, and no more than segSpareBytes
// of them, so a queue of 8-byte values whose length swings by up to about
// 2000 values allocates nothing in steady state; one that grows further
// allocates one block per segBlockCap values, and blocks beyond the spare
// places go to the garbage collector, as does a block whose last reader
// finds another reader still busy in it (see below; with several
// consumers, rarely). (Allocating every block instead, and leaving the old
// ones to the GC, saves the per-pop READ mark below but measured slower in
// wall-clock time: the collector's work lands on the other core.)
//
// When is every slot read? Each reader marks its slot READ after taking
// the value, with a release store; the reader of a block's last slot then
// checks the other slots' marks (acquire loads). If every one is READ,
// every reader of the block is done, and so is every producer (a reader
// waits for WRITE), and the block is cleared and offered for reuse. A
// reader still between its claim and its mark (it waits for a producer
// that has not written yet, or was preempted) is waited for only briefly:
// if its mark does not come, the block is left to the garbage collector
// instead, and nobody waits for it. (crossbeam's SegQueue hands the scan
// on to that reader instead, with a DESTROY bit that both sides set by a
// read-modify-write on the slot's state: two locked instructions per value
// where marks that only their writer sets need none.)
//
// Reuse cannot confuse a goroutine that holds a stale block pointer: a
// goroutine dereferences a block only after its compare-and-swap on an
// index of that block has succeeded, and indices only grow, so the
// compare-and-swap fails once the block has been left behind.

const (
	// segLap is the number of index positions per block: segBlockCap slots
	// plus the sentinel. A power of two, so that offsets are cheap.
	segLap = 128
	// segBlockCap is the number of slots in a block: 127 slots of 16 bytes
	// (for an 8-byte value) make a block of about 2 KiB.
	segBlockCap = segLap - 1
	// segSpares is the most emptied blocks a queue keeps for reuse, and
	// segSpareBytes the most memory they may take together.
	segSpares     = 16
	segSpareBytes = 64 << 10
	// Each index keeps a flag in its low bit; positions start at bit 1. In
	// the head index, segHasNext says that the head block is known to have
	// a successor, so a pop need not read the tail index to rule out an
	// empty queue. In the tail index, segClosed is the closed mark (as in
	// concurrent-queue): Close sets it with one atomic OR, and every push
	// compare-and-swaps the tail index, so no push succeeds after it.
	segShift   = 1
	segHasNext = 1
	segClosed  = 1
)

// The bits of a slot's state. Each is set by one goroutine, the only one
// that writes the state at that time, so a release store sets it: WRITE by
// the slot's producer (the state is 0 until then), READ by its consumer,
// after it has seen WRITE. Only a block's retire resets the states, after
// it has seen every READ.
const (
	slotWrite = 1 // the producer has stored the value
	slotRead  = 2 // the consumer has taken the value
)

// retireSpins is how many times retire looks again at a slot whose reader
// has not marked it READ, spinning in between (backoff.Spin: 1, 2, 4, ...
// 64 iterations, about 200 in all), before it leaves the block to the
// garbage collector: ample for a reader that is running to copy a value
// out and mark it.
const retireSpins = 8

// segSlot holds one value.
type segSlot[T any] struct {
	// state holds the slot* bits. It is a plain uint64 (for
	// machine.StoreRelease, which stores 64 bits) used only through
	// atomic.LoadUint64 and machine.StoreRelease, and reset by retire with
	// plain writes (see there); the zero-size field keeps it 8-byte aligned
	// on 32-bit platforms (see channel). The sync/atomic functions are
	// compiler intrinsics everywhere, whereas the methods of atomic.Uint64
	// have to be inlined first (see channel).
	_     [0]atomic.Uint64
	state uint64
	value T
}

// segBlock is one link of the list.
type segBlock[T any] struct {
	// next is the *segBlock[T] after this one, nil until the producer
	// that claimed this block's last slot installs it. It is an
	// unsafe.Pointer used through atomic.LoadPointer, an intrinsic in
	// every package, and atomic.StorePointer, in installNext only (see
	// channel for why not atomic.Pointer).
	next  unsafe.Pointer
	slots [segBlockCap]segSlot[T]
}

// loadBlock loads a block pointer: atomic.LoadPointer, an intrinsic.
func loadBlock[T any](p *unsafe.Pointer) *segBlock[T] {
	return (*segBlock[T])(atomic.LoadPointer(p))
}

// storeBlock stores a block pointer. atomic.StorePointer is a call in
// every package (it carries the GC write barrier), so only the functions
// that run once per block call this: installNext and enterNext.
func storeBlock[T any](p *unsafe.Pointer, b *segBlock[T]) {
	atomic.StorePointer(p, unsafe.Pointer(b))
}

// waitNext returns b.next, waiting for the producer that claimed b's last
// slot to install it.
func (b *segBlock[T]) waitNext() *segBlock[T] {
	var bo backoff.Backoff
	for {
		if next := loadBlock[T](&b.next); next != nil {
			return next
		}
		bo.Snooze()
	}
}

// segQueue is an unbounded MPMC FIFO queue. Its zero value is not usable;
// call newSegQueue.
//
// Ownership: position p (tail index p<<segShift) belongs to the producer
// whose compare-and-swap moves the tail index past it; only that producer
// writes the slot's value, then sets WRITE, which publishes it. The
// consumer whose compare-and-swap moves the head index past p owns the slot
// from then on: it waits for WRITE, takes the value, zeroes the slot and
// sets READ. The block belongs to the reader of its last slot once that
// reader has seen every other slot READ (see above).
type segQueue[T any] struct {
	// head is read and moved by consumers only. headBlock is the block that
	// holds the head position (or the one being left, while the head index
	// rests on a sentinel).
	//
	// The indices are plain uint64s used only through sync/atomic's
	// functions; each follows a zero-size [0]atomic.Uint64, which keeps it
	// 8-byte aligned on 32-bit platforms (see channel). The blocks are
	// *segBlock[T] held in unsafe.Pointers (see loadBlock).
	_         [0]atomic.Uint64
	headIndex uint64
	headBlock unsafe.Pointer
	_         [layout.CacheLine - 16]byte

	// tail is read and moved by producers, and read by consumers to decide
	// "empty"; it carries the closed mark.
	_         [0]atomic.Uint64
	tailIndex uint64
	tailBlock unsafe.Pointer
	_         [layout.CacheLine - 16]byte

	// spares hold cleared blocks ready for reuse, spares[:nspare] under
	// spareMu. The consumer that retires a block puts it here; a
	// producer that claims a block's last slot takes one. Both happen once
	// per block, not per value, and both only try the lock: a goroutine
	// that finds it taken allocates a block, or leaves its block to the
	// garbage collector, rather than wait.
	spareMu   sync.Mutex
	spares    [segSpares]*segBlock[T]
	nspare    int
	numSpares int // how many of spares may be used: segSpareBytes worth of blocks, at least 1
}

func newSegQueue[T any]() *segQueue[T] {
	q := new(segQueue[T])
	q.numSpares = max(1, min(segSpares, segSpareBytes/int(unsafe.Sizeof(segBlock[T]{}))))
	// The first block is installed up front, so that neither side ever
	// sees a nil block (crossbeam installs it lazily on the first push).
	// Plain stores: q is not shared yet.
	b := unsafe.Pointer(new(segBlock[T]))
	q.headBlock, q.tailBlock = b, b
	return q
}

// newBlock returns a spare block, or a new one.
func (q *segQueue[T]) newBlock() *segBlock[T] {
	if q.spareMu.TryLock() {
		if q.nspare > 0 {
			q.nspare--
			b := q.spares[q.nspare]
			q.spares[q.nspare] = nil
			q.spareMu.Unlock()
			return b
		}
		q.spareMu.Unlock()
	}
	return new(segBlock[T])
}

// putSpare offers the cleared block b for reuse; if every spare place is
// taken, or another goroutine holds the spares, b goes to the garbage
// collector.
func (q *segQueue[T]) putSpare(b *segBlock[T]) {
	if q.spareMu.TryLock() {
		if q.nspare < q.numSpares {
			q.spares[q.nspare] = b
			q.nspare++
		}
		q.spareMu.Unlock()
	}
}

// TryPush appends v and reports true, or reports false when the queue is
// closed. It never fails otherwise.
func (q *segQueue[T]) TryPush(v T) bool {
	var bo backoff.Backoff
	tail := atomic.LoadUint64(&q.tailIndex)
	block := loadBlock[T](&q.tailBlock)
	var next *segBlock[T]
	for {
		if tail&segClosed != 0 {
			if next != nil {
				q.putSpare(next)
			}
			return false
		}
		offset := (tail >> segShift) % segLap
		if offset == segBlockCap {
			// Another producer claimed the last slot and is installing
			// the next block: wait for it.
			bo.Snooze()
			tail = atomic.LoadUint64(&q.tailIndex)
			block = loadBlock[T](&q.tailBlock)
			continue
		}
		// About to claim the last slot: get the next block before the
		// compare-and-swap, so that the other producers wait on the
		// sentinel as briefly as possible. If the compare-and-swap is lost,
		// the block is kept for the next attempt.
		if offset+1 == segBlockCap && next == nil {
			next = q.newBlock()
		}
		newTail := tail + 1<<segShift
		if atomic.CompareAndSwapUint64(&q.tailIndex, tail, newTail) {
			// The index was still tail, so block, loaded after tail, is the
			// block of this position: the tail block changes only after the
			// index passes this block's last slot.
			if offset+1 == segBlockCap {
				q.installNext(block, next)
			} else if next != nil {
				// Got a block for a last slot that another producer took.
				q.putSpare(next)
			}
			s := &block.slots[offset]
			s.value = v
			// Publish with a release store: it pairs with the consumer's
			// atomic.LoadUint64 of state in TryPop, which waits for WRITE
			// before it reads value. Release suffices because this producer
			// is the only writer of the state until WRITE is seen (retire
			// resets it only after READ), and nothing after this store
			// depends on its order against a later load: the Dekker pair
			// with a receiver that is about to wait is formed by the tail
			// index's compare-and-swap above, which an empty check reads.
			machine.StoreRelease(&s.state, slotWrite)
			return true
		}
		bo.Spin()
		tail = atomic.LoadUint64(&q.tailIndex)
		block = loadBlock[T](&q.tailBlock)
	}
}

// installNext is TryPush's step for the producer that claimed block's last
// slot (the tail index now rests on the sentinel): it installs next as the
// tail block, then moves the index off the sentinel, then links next after
// block. The order matters: a consumer that takes the last slot waits for
// block.next and then moves head into the next block; by then the tail
// index has left the sentinel, so "head == tail" still means empty. It is
// a function of its own, and not inlined, so that TryPush itself holds no
// call to atomic.StorePointer (see channel).
//
//go:noinline
func (q *segQueue[T]) installNext(block, next *segBlock[T]) {
	storeBlock(&q.tailBlock, next)
	atomic.AddUint64(&q.tailIndex, 1<<segShift) // an add, not a store: it keeps a closed mark set meanwhile
	storeBlock(&block.next, next)
}

// enterNext is TryPop's step for the consumer that took block's last slot
// (newHead is the head index its compare-and-swap set, on the sentinel):
// it moves head to the next block, keeping the successor flag if the next
// block already has one. Not inlined, for the reason given at installNext.
//
//go:noinline
func (q *segQueue[T]) enterNext(block *segBlock[T], newHead uint64) {
	next := block.waitNext()
	nextIndex := (newHead &^ segHasNext) + 1<<segShift
	if loadBlock[T](&next.next) != nil {
		nextIndex |= segHasNext
	}
	storeBlock(&q.headBlock, next)
	// A release store: it pairs with the atomic.LoadUint64 of headIndex in
	// TryPop (and Len) of other consumers, which load headBlock after it,
	// so one that sees the index off the sentinel sees next as headBlock.
	// No consumer changes headIndex while it rests on the sentinel (their
	// compare-and-swaps wait for it to move), so there is no update to
	// lose, and no load of this consumer needs to be ordered after it.
	machine.StoreRelease(&q.headIndex, nextIndex)
}

// TryPop removes and returns the oldest value, or reports false when the queue
// is empty. Like the rings, it never fails because of contention: a slot
// that a producer has claimed but not yet written is waited for.
func (q *segQueue[T]) TryPop() (T, bool) {
	var bo backoff.Backoff
	head := atomic.LoadUint64(&q.headIndex)
	block := loadBlock[T](&q.headBlock)
	for {
		offset := (head >> segShift) % segLap
		if offset == segBlockCap {
			// Another consumer took the last slot and is moving head to
			// the next block.
			bo.Snooze()
			head = atomic.LoadUint64(&q.headIndex)
			block = loadBlock[T](&q.headBlock)
			continue
		}
		newHead := head + 1<<segShift
		if newHead&segHasNext == 0 {
			// seq-cst load after this consumer's own loads; it is the
			// "empty" decision. A producer that claimed a position has
			// already moved tail, so a claimed but unwritten slot is never
			// reported empty.
			tail := atomic.LoadUint64(&q.tailIndex)
			if head>>segShift == tail>>segShift {
				var zero T
				return zero, false
			}
			// Head and tail in different blocks: the head block has a
			// successor, remember it so later pops skip the tail load.
			if (head>>segShift)/segLap != (tail>>segShift)/segLap {
				newHead |= segHasNext
			}
		}
		if atomic.CompareAndSwapUint64(&q.headIndex, head, newHead) {
			if offset+1 == segBlockCap {
				q.enterNext(block, newHead)
			}
			s := &block.slots[offset]
			// Acquire: pairs with the producer's release store of WRITE.
			for atomic.LoadUint64(&s.state)&slotWrite == 0 { // claimed but not written yet
				bo.Snooze()
			}
			v := s.value
			var zero T
			s.value = zero // let the GC free what the value references
			if offset+1 == segBlockCap {
				// The last slot's reader checks the others; its own slot
				// needs no mark.
				q.retire(block)
			} else {
				// Mark READ with a release store: it pairs with retire's
				// atomic.LoadUint64 of this state, and carries the reads
				// and the zeroing of value above with it, so that a retire
				// that sees READ may clear and reuse the slot. This
				// consumer is the only writer of the state now (WRITE is
				// set, nobody else sets anything), so a store loses no
				// bit, and nothing waits on the order of this store
				// against a later load.
				machine.StoreRelease(&s.state, slotWrite|slotRead)
			}
			return v, true
		}
		bo.Spin()
		head = atomic.LoadUint64(&q.headIndex)
		block = loadBlock[T](&q.headBlock)
	}
}

// retire is called by the reader of b's last slot once it has taken its
// value. It checks that every other slot is marked READ, waiting up to
// retireSpins looks for each, and resets the states as it passes them. If
// every slot is READ, every reader of b is done, and so is every producer
// (a reader waits for WRITE), and b goes to a spare place. If a reader has
// not marked its slot in time, b is left to the garbage collector: that
// reader still holds b and marks its slot in a block that nobody reuses.
//
// The resets are plain writes: a slot's state is written by nobody once its
// READ is seen (the load here is an acquire load that synchronises with its
// reader's release store), and a block that is left behind is never read
// again. The values are zero already.
func (q *segQueue[T]) retire(b *segBlock[T]) {
	b.slots[segBlockCap-1].state = 0
	for i := 0; i < segBlockCap-1; i++ {
		s := &b.slots[i]
		var bo backoff.Backoff
		for spins := 0; atomic.LoadUint64(&s.state)&slotRead == 0; spins++ {
			if spins == retireSpins {
				return // slot i's reader is not done: leave b to the GC
			}
			bo.Spin()
		}
		s.state = 0
	}
	// A plain store: every goroutine that loaded b.next did so before its
	// reader marked READ on a slot of b, and this scan loaded each of those
	// marks after, so those loads happen before this write; and no
	// producer writes b.next before b is handed out again.
	b.next = nil
	q.putSpare(b)
}

// ForcePush is TryPush: an unbounded queue is never full, so nothing is
// displaced.
func (q *segQueue[T]) ForcePush(v T) (old T, displaced, ok bool) {
	return old, false, q.TryPush(v)
}

// Close sets the closed mark, after which every TryPush fails, and reports
// whether this call set it.
func (q *segQueue[T]) Close() bool {
	return atomic.OrUint64(&q.tailIndex, segClosed)&segClosed == 0
}

// IsClosed reports whether Close has run.
func (q *segQueue[T]) IsClosed() bool { return atomic.LoadUint64(&q.tailIndex)&segClosed != 0 }

// Len returns the number of values in the queue: a consistent snapshot of
// the two indices (tail read twice around head), as crossbeam computes it.
func (q *segQueue[T]) Len() int {
	for {
		tail := atomic.LoadUint64(&q.tailIndex)
		head := atomic.LoadUint64(&q.headIndex)
		if atomic.LoadUint64(&q.tailIndex) != tail {
			continue
		}
		tail &^= 1<<segShift - 1
		head &^= 1<<segShift - 1
		// An index on a sentinel counts as the start of the next block.
		if (tail>>segShift)&(segLap-1) == segLap-1 {
			tail += 1 << segShift
		}
		if (head>>segShift)&(segLap-1) == segLap-1 {
			head += 1 << segShift
		}
		// Rebase both on head's block, then remove the sentinels between.
		lap := (head >> segShift) / segLap
		tail -= (lap * segLap) << segShift
		head -= (lap * segLap) << segShift
		tail >>= segShift
		head >>= segShift
		return int(tail - head - tail/segLap)
	}
}
