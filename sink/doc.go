// Package sink is a sharded fire-and-forget sink for fan-in workloads, the
// Go rendering of the Rust crate sharded-sink: many goroutines hand values
// to a bounded set of rings without waiting, and one drain worker per ring
// hands them on in batches to an [Action], off the producers' path. A value
// that finds its ring full is shed and counted. For telemetry, logs,
// metrics and other streams that tolerate loss; not a durable queue (no
// at-least-once delivery, no order across shards).
//
//	s, err := sink.New(sink.Config[Event]{Name: "events"},
//		sink.ActionFunc[Event](func(ctx context.Context, batch []Event) {
//			ship(ctx, batch) // keep no reference into batch
//		}))
//	ok := s.Push(ev)         // false: the ring was full, ev was dropped and counted
//	...
//	err = s.Shutdown(ctx)    // producers stopped first; drains what is buffered
//
// # Guarantees
//
//  1. A push into a ring with room returns after one TryPush ([Sink.Push]
//     tries other rings when its home is full; see [Sink.Push]); a push
//     that every ring refused waits as What a push waits for says, and
//     [Handle.PushWait] and [Sink.PushWait] wait for room until their ctx
//     ends.
//  2. A successful push allocates nothing and writes to no shared counter,
//     lock or timer, but for one compare-and-swap on its shard's byte
//     counter when [Config.MaxQueuedBytes] is set.
//  3. Every refused or displaced value adds one to exactly one shard's drop
//     counter, under one reason ([Stats]): once the sink is quiet, Drained
//     + Queued + Dropped == attempted.
//  4. Every accepted value that is not displaced is handed to Drain exactly
//     once, or is still in its ring (or on disk, with [Config.Spill]) after
//     a Shutdown whose ctx ended, for a later Shutdown (or sink).
//  5. [Sink.Flush] returns once every value accepted before the call has
//     been handed to Drain and that Drain call has returned.
//  6. [Sink.Shutdown] drains every accepted value unless its ctx ends first;
//     its error then says how many were left, and a later Shutdown resumes.
//  7. Once Shutdown has begun, every push fails and is counted, and every
//     PushWait returns [ErrShutdown]; a push that races the close either
//     lands before it and is drained, or fails and is counted.
//  8. A worker that has run for 2 ms yields before its next batch, so a
//     Drain that never blocks cannot starve other goroutines on its P.
//  9. A panic in Drain (or runtime.Goexit) is recovered, counted in
//     Stats().DrainPanics and logged; that batch is lost, the worker goes on.
//  10. With [Config.MaxQueuedBytes] the values in the rings and in
//     undrained batches never sum to more than it (a larger value goes in
//     alone); with [Config.MaxBatchBytes] no batch sums to more than it.
//
// Push returning true means the value was in a ring at that instant, not that
// it was drained. There is no count of accepted values, because keeping one
// would put a shared write on every push: count the true results yourself.
//
// # Pushing, and order
//
// Values are FIFO within a shard and unordered across shards. [Sink.Push]
// needs no handle: its home is the ring of the producer's CPU on
// linux/amd64 with RDPID (producers running at once never share one), and
// elsewhere a ring chosen at random from the goroutine's stack.
// [Sink.Handle] and [Sink.HandleFor] push into one fixed ring: use them, with
// [Config.DisableStealing], where one producer's or key's values must keep
// their order.
//
// # What a push waits for
//
// A push never waits on the destination, however slow: a full ring sheds,
// and a push parks only while its drain worker is short of CPU
// behind a destination that keeps up (or, with Spill, while the spiller
// moves values to disk), for at most HandOffWait in all.
//
// A ring fills either because the destination is slower than the pushes
// (shedding is the answer) or because the worker is short of CPU behind
// producers that never block (shedding then only keeps the ring full). The
// sink tells them apart by the destination's pace, the shortest of its
// recent calls: under [FastCall] the push parks (Stats().HandOffs counts
// it); behind a slower destination, or a call older than [SlowDrain], it
// sheds at once. [DropOldest] and [Config.DisableHandOff] never park. The
// rule and its numbers: sink/handoff.go; the figures: docs/benchmarks.md,
// "What a push waits for".
//
// # The spill tier
//
// With [Config.Spill] a directory on disk stands behind the rings: while a
// Drain call is slow, a spiller goroutine moves a quarter-full ring's values
// to the shard's segment log, and the worker hands them to Drain before the
// ring's, so a shard's values keep their order across memory and disk.
// Producers never touch the disk. A push is shed for the disk
// (Stats().DroppedForDisk) only while the shard's share of the budget is
// full, or for a second after a failed write or read; nothing the disk
// does stops the sink. A crash loses the values in the rings and in batches, and those
// spilled since the last sync (Spill.SyncInterval); a sink started on the
// directory hands Drain the rest first, and may repeat what was read back
// since the last sync. A Shutdown that drains everything leaves no value on
// disk. The details: [Spill]; the mechanism: docs/design.md, "sink: the
// spill tier".
//
// # Waiting for room
//
// For values worth a bounded wait rather than a drop, [Handle.PushWait] and
// [Sink.PushWait] park until a worker frees room or ctx ends (the value is
// then dropped and counted in Stats().WaitedOut). Waiters do not spin and
// are woken oldest first; Push is unchanged by PushWait.
//
// # Draining, Flush and Shutdown
//
// Each worker takes up to BatchSize values from its ring, tops a short batch
// up by stealing from other shards, and calls Drain at once
// ([Config.MaxDelay] holds a trickle for a fuller batch). An idle worker
// parks until a push wakes it ([IdleWake]) or polls ([IdlePoll]).
// [Sink.Flush] is exact with stealing and live producers; [Sink.Shutdown]
// closes the rings, drains them and stops the workers; with the ctx of a
// Drain call both return [ErrCalledFromDrain]. The overload monitor calls
// [Config.OnOverload] after each OverloadInterval in which drops rose.
//
// # Costs and mechanism
//
// A successful push is a compare-and-swap on the ring's tail, a load and a
// release store of the slot's stamp, the value's copy and a load of the
// shard's sleeping flag (internal/hotpath's test checks the compiled push).
// Tables: docs/benchmarks.md. How it works, and which file holds each
// protocol: docs/design.md, "sink: mechanism".
package sink
