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
// a push waits for"). On success it is one TryPush on the shard's ring and
// one load of the shard's sleeping flag: no counter, lock, timer or allocation
// (with [Config.MaxQueuedBytes] set, the TryPush first adds v's size to the
// shard's byte counter). When the ring is full, v is dropped, one add on
// the shard's padded drop counter records it, and Push returns false; under
// [DropOldest] the ring's oldest value is displaced and counted instead,
// and Push returns true. When the shard's share of MaxQueuedBytes has no
// room for v, v is dropped and counted, under either policy, in Dropped and
// in DroppedForBytes.
// Once [Sink.Shutdown] has begun the rings are closed: every push returns
// false and counts its value as dropped.
//
// A zero Handle (not from Sink.Handle or Sink.HandleFor) panics with
// "sink: Handle used without New".
//
// True means that the value was in a ring at that instant, not that it was
// drained: a later Shutdown whose ctx ends first, or a panic in Drain, can
// still lose it.
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
