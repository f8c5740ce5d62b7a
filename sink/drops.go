package sink

import (
	"sync/atomic"
	"unsafe"
)

// This file counts the drops that have a reason of their own. Every drop
// adds one to its shard's dropped first (shard.countDrop); a drop with a
// reason then adds one to that reason's counter, and Stats loads the
// reasons before dropped, so that a snapshot never has more of a reason
// than of drops. The reasons: the byte budget (slowPath.forBytes), a
// PushWait whose ctx ended (waitQueue.waitedOut), a push once Shutdown had
// begun (waitQueue.afterShutdown) and a value displaced under DropOldest
// (slowPath.displaced). A drop with none of them is a push refused by a
// ring full in slots. None of this runs on a push that succeeds.

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

// countRefusal counts a push that the shard's ring refused: dropped, and
// then, when Shutdown has begun, dropped after shutdown. It reports whether
// it was the second. Shutdown sets closing before it closes a ring, so a
// push that a closed ring refused always counts as one after shutdown; a
// push refused for a full ring as Shutdown begins may too, and it was
// refused after Shutdown began.
func (sh *shard[T]) countRefusal() (afterShutdown bool) {
	sh.countDrop()
	if sh.sink.isClosing() {
		sh.sink.countAfterShutdown(sh)
		return true
	}
	return false
}

// isClosing reports whether Shutdown has begun closing the rings.
func (s *Sink[T]) isClosing() bool { return atomic.LoadUint32(&s.closing) != 0 }

// countShutdownDrop counts a drop on sh that Shutdown caused (a PushWait
// that found it begun, or was parked when it began): dropped, then dropped
// after shutdown.
func (s *Sink[T]) countShutdownDrop(sh *shard[T]) {
	sh.countDrop()
	s.countAfterShutdown(sh)
}

// countAfterShutdown adds one to the after-shutdown drops of sh, which
// countDrop has counted already. sh is found by its place in s.shards, so
// that the shard needs no field for it.
func (s *Sink[T]) countAfterShutdown(sh *shard[T]) {
	i := (uintptr(unsafe.Pointer(sh)) - uintptr(unsafe.Pointer(&s.shards[0]))) / unsafe.Sizeof(s.shards[0])
	atomic.AddUint64(&s.waits[i].afterShutdown, 1)
}

// countDisplaced records a value displaced by DropOldest: dropped, then
// displaced.
func (sh *shard[T]) countDisplaced() {
	sh.countDrop()
	atomic.AddUint64(&sh.slow.displaced, 1)
}

// displacedCount returns the values that DropOldest displaced from the
// shard's ring so far (0 under DropNewest).
func (sh *shard[T]) displacedCount() uint64 {
	if sh.slow == nil {
		return 0
	}
	return atomic.LoadUint64(&sh.slow.displaced)
}
