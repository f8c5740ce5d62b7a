package sink

import (
	"sync/atomic"
	"unsafe"
)

// This file counts the drops. Every drop adds one to exactly one counter,
// its reason's: a ring full in slots (shard.full), the byte budget
// (slowPath.forBytes), a PushWait whose ctx ended (waitQueue.waitedOut), a
// push once Shutdown had begun (waitQueue.afterShutdown), a value
// displaced under DropOldest (slowPath.displaced), or the spill tier (a
// push refused while it could take nothing, spillShard.refused, and a
// value it lost, spillShard.lost). A shard's drops are
// their sum (dropped): every counter only grows, so a snapshot of them,
// and their sum, never goes back, whatever drops are in flight as it is
// taken (a drop counted first in a total and then in its reason would
// move from "full" to its reason between two snapshots). None of this
// runs on a push that succeeds.

// shed is the end of a push that every ring it tried refused, on a shard
// without a slow path: it counts the drop (and, once Shutdown has begun,
// the reason) and returns false. Out of line, so that Push and Handle.Push
// pay for the reason's check only when they drop.
//
//go:noinline
func (sh *shard[T]) shed() bool {
	sh.countRefusal()
	return false
}

// countRefusal counts a push that the shard's ring refused: as one after
// shutdown when Shutdown has begun, else as one for a full ring. It
// reports whether it was the first. Shutdown reaches phaseClosing before it closes a ring, so a
// push that a closed ring refused always counts as one after shutdown; a
// push refused for a full ring as Shutdown begins may too, and it was
// refused after Shutdown began.
func (sh *shard[T]) countRefusal() (afterShutdown bool) {
	return sh.countRefusalFor(false)
}

// countRefusalFor counts a push that the shard refused, for bytes when
// forBytes is set (the budget's share had no room) and else for a full
// ring; once Shutdown has begun, as one after shutdown whatever it was.
// It reports whether it was one after shutdown.
func (sh *shard[T]) countRefusalFor(forBytes bool) (afterShutdown bool) {
	switch {
	case sh.sink.isClosing():
		sh.sink.countAfterShutdown(sh)
		return true
	case forBytes:
		sh.countForBytes()
	case sh.sink.spill != nil && sh.sink.countForDisk(sh):
		// counted for the disk
	default:
		sh.countFull()
	}
	return false
}

// countForDisk counts a push into sh refused while its spill tier could
// take nothing (its share of the budget full, or off after a failed
// write), and reports whether it did: a ring that fills while the tier
// takes values sheds for want of slots, as without the tier.
func (s *Sink[T]) countForDisk(sh *shard[T]) bool {
	ts := &s.spill.shards[s.indexOf(sh)]
	if !ts.refuses(s.epoch) {
		return false
	}
	atomic.AddUint64(&ts.refused, 1)
	return true
}

// isClosing reports whether Shutdown has begun closing the rings.
func (s *Sink[T]) isClosing() bool { return s.reached(phaseClosing) }

// countShutdownDrop counts a drop on sh that Shutdown caused (a PushWait
// that found it begun, or was parked when it began).
func (s *Sink[T]) countShutdownDrop(sh *shard[T]) { s.countAfterShutdown(sh) }

// countAfterShutdown adds one to the after-shutdown drops of sh. sh is found by its place in s.shards, so
// that the shard needs no field for it.
func (s *Sink[T]) countAfterShutdown(sh *shard[T]) {
	atomic.AddUint64(&s.waits[s.indexOf(sh)].afterShutdown, 1)
}

// indexOf returns sh's place in s.shards, so that a shard needs no field
// for it.
func (s *Sink[T]) indexOf(sh *shard[T]) int {
	return int((uintptr(unsafe.Pointer(sh)) - uintptr(unsafe.Pointer(&s.shards[0]))) / unsafe.Sizeof(s.shards[0]))
}

// countDisplaced records a value displaced by DropOldest.
func (sh *shard[T]) countDisplaced() { atomic.AddUint64(&sh.slow.displaced, 1) }

// displacedCount returns the values that DropOldest displaced from the
// shard's ring so far (0 under DropNewest).
func (sh *shard[T]) displacedCount() uint64 {
	if sh.slow == nil {
		return 0
	}
	return atomic.LoadUint64(&sh.slow.displaced)
}
