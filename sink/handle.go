package sink

import "context"

// Handle pushes into one shard of a [Sink]. Take one from [Sink.Handle] or
// [Sink.HandleFor] and keep it: a Handle is immutable, safe for concurrent
// use, and costs nothing to hold. Every Handle of a sink's shard is the same
// pointer.
type Handle[T any] struct {
	sh    *shard[T]
	next  *Handle[T] // the next shard's handle, for Sink.Push
	shard int
	s     *Sink[T] // the sink, for PushWait
}

// Push pushes v into the handle's shard and reports whether it was accepted.
// A push never waits on the destination, however slow: a full ring sheds,
// and a push parks only while its drain worker is short of CPU behind a
// destination that keeps up (or, with Spill, while the spiller moves
// values to disk), for at most HandOffWait in all (the package doc, "What
// a push waits for"). A success is one TryPush and one load of the shard's
// sleeping flag (MaxQueuedBytes adds a compare-and-swap). A value that a
// full ring or the shard's byte share refuses is dropped and counted, and
// Push returns false; under [DropOldest] a full ring displaces its oldest
// value instead, and Push returns true. Once [Sink.Shutdown] has begun
// every push returns false and is counted. True means that the value was
// in a ring at that instant, not that it was drained. A zero Handle (not
// from Sink.Handle or Sink.HandleFor) panics.
func (h *Handle[T]) Push(v T) bool {
	sh := h.sh
	if sh == nil {
		panicUnmade("Handle")
	}
	if sh.ring.TryPush(v) {
		// The producer's half of the doorbell's Dekker pair (worker.park
		// has the argument). The load hits a line that is written only
		// when the worker parks or wakes.
		if sh.isSleeping() {
			sh.wake()
		}
		return true
	}
	if sh.slow != nil {
		return sh.refused(v) // DropOldest, or a byte budget
	}
	return sh.shed()
}

// Shard returns the index of the handle's shard, in [0, Shards).
func (h *Handle[T]) Shard() int { return h.shard }

// PushWait pushes v into the handle's shard, waiting for room if need be.
// When the ring has room (and the shard's share of MaxQueuedBytes room for
// v) it pushes at once, exactly as [Handle.Push] does, and returns nil.
// Otherwise it parks until a drain worker frees room in this shard, or ctx
// ends, or Shutdown begins: it does not spin, and a parked caller costs no
// CPU. It returns:
//
//   - nil once v is in the ring;
//   - ctx.Err(), unwrapped, when ctx ends first: v is dropped and counted
//     in Dropped and, as a reason of its own, in WaitedOut;
//   - [ErrShutdown] at once, or as soon as Shutdown begins while it waits:
//     v is dropped and counted in Dropped, as a Push then is;
//   - [ErrValueTooLarge] at once when v's size is above the shard's share
//     of MaxQueuedBytes and the shard is not empty (such a value goes in
//     only alone, and a wait for an empty shard could last for ever): v is
//     dropped and counted in Dropped and DroppedForBytes.
//
// PushWait never displaces: under [DropOldest] it waits for room rather
// than push an older value out (the caller chose to wait rather than lose
// a value). Waiters of a shard are woken in the order they parked, as
// many as there is room for (in slots, and in bytes by their sizes);
// docs/design.md, "sink: PushWait", says how and what it costs. A caller
// that gives up because ctx ended returns within a scheduling delay of
// the ctx's end. PushWait panics with a nil ctx.
func (h *Handle[T]) PushWait(ctx context.Context, v T) error {
	sh := h.sh
	if sh == nil {
		panicUnmade("Handle")
	}
	mustHaveCtx("PushWait", ctx)
	if sh.ring.TryPush(v) {
		if sh.isSleeping() {
			sh.wake()
		}
		return nil
	}
	return h.s.pushWait(ctx, h.shard, v)
}
