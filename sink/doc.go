// Package sink is a sharded fire-and-forget sink for fan-in workloads: many
// goroutines hand values to a bounded set of rings without waiting, and one
// drain worker per ring hands them on in batches to an [Action], off the
// producers' path. When a ring is full the value is shed and counted instead
// of slowing the producer down.
//
// It is the Go rendering of the Rust crate sharded-sink. Its design value is
// flat, predictable producer cost under contention: a successful push is one
// lock-free TryPush on one shard's ring, with no lock, no allocation, and no
// counter touched, and producers running at the same instant push into
// different rings. It suits telemetry, logging, metrics and other streams
// that tolerate loss. It is not a durable queue: there is no at-least-once
// delivery, no order across shards, and no resharding.
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
//  1. A push never blocks: it returns after one TryPush on one ring (two for
//     a handle-less [Sink.Push] whose home ring is full).
//  2. A successful push allocates nothing and writes to no shared counter,
//     lock or timer, but for one add to its shard's byte counter when
//     [Config.MaxQueuedBytes] is set. It loads the shard's sleeping flag, a
//     cache line that is written only when the worker falls asleep or wakes
//     (see Idle below).
//  3. Every rejected push adds one to exactly one shard's drop counter, and
//     so does every value displaced under [DropOldest]: accepted + rejected
//     == attempted, [Sink.Dropped] == rejected + displaced, and once the
//     sink is quiet Drained + Queued + Dropped == attempted (Stats).
//     Under [DropNewest], the default, nothing is displaced.
//  4. Every accepted value that is not displaced is handed to Drain exactly
//     once, or is still in its ring (Stats().Queued) after a Shutdown whose
//     ctx ended, which a later Shutdown drains.
//  5. [Sink.Flush] returns once every value accepted before the call has been
//     handed to Drain and that Drain call has returned.
//  6. [Sink.Shutdown] closes the rings and drains every value that was
//     accepted, unless its ctx ends first; then its error says how many
//     values were left, and a later Shutdown with a live ctx resumes the
//     drain.
//  7. Once Shutdown has begun, every push returns false and is counted as
//     dropped. A push that races the close either lands before it and is
//     drained, or fails and is counted.
//  8. A worker yields the processor after every batch, so a Drain that never
//     blocks cannot starve other goroutines or timers on its P.
//  9. A panic in Drain, or a call of runtime.Goexit, is recovered, counted
//     in Stats().DrainPanics and logged (with its stack, at most once a
//     minute); that batch is lost and the shard's worker goes on (in a new
//     goroutine after a Goexit).
//  10. With [Config.MaxQueuedBytes] set, the values in the rings and in
//     batches whose Drain has not returned never sum to more than
//     MaxQueuedBytes bytes (each shard holds at most its share, or one
//     larger value alone); a push beyond that is dropped and counted in
//     Dropped and Stats().DroppedForBytes. With [Config.MaxBatchBytes] set,
//     a Drain batch sums to at most MaxBatchBytes bytes, or is one larger
//     value.
//
// Push returning true means the value was in a ring at that instant, not that
// it was drained. There is no count of accepted values, because keeping one
// would put a shared write on every push: count the true results yourself.
//
// # Order
//
// Values are FIFO within a shard and unordered across shards. Stealing hands
// values of one shard to several workers, whose Drain calls run concurrently,
// so order is kept only up to the batch: set DisableStealing and push through
// one handle, or use one shard, where order matters. Config.Shards = 1 gives
// one global FIFO, at the price of one contended ring.
//
// # Pushing
//
// [Sink.Push] is the way to push when what matters is a flat cost: it needs
// no handle and chooses the ring by where the producer runs. On linux/amd64
// with the RDPID instruction (detected once, checked against the getcpu
// system call) that is the ring of the CPU the producer runs on: two
// producers that run at the same instant run on different CPUs, so with the
// default shard count of a ring per CPU ([DefaultShards]) they never write
// the same ring's tail, and the cost per push stays the same from one
// producer to hundreds. Elsewhere (other systems, arm64, 386, a hypervisor
// that hides the CPU number) the home comes from the address of the
// goroutine's stack, which spreads goroutines over the rings at random;
// the default shard count is then a few times GOMAXPROCS, so that the
// goroutines running at one time write different rings most of the time.
// When the home ring is full, Push tries the next shard's ring once, so a
// single busy producer spills into a second ring before anything is shed.
//
// [Sink.Handle] hands out handles round-robin over the shards (the
// original's issue()), and [Sink.HandleFor] maps a key of the caller's (a
// connection, a tenant) to a shard; both push into one fixed ring. Use them
// where the values of one producer or key must keep their order: a
// goroutine that moves to another CPU moves its Sink.Push home with it.
// A handle is immutable and costs nothing to keep.
//
// # Draining
//
// Each worker takes up to BatchSize values from its own ring into a reused
// slice, tops a short batch up by stealing from other shards (at most
// StealVictims shards and StealItems values from each per round, visiting
// victims in a fixed round-robin order and skipping one whose consumer lock
// is held: stealing never waits and never touches the producer path), calls
// Drain, clears the slice so that the garbage collector can free what it
// held, and yields. A worker whose whole batch came from its own ring wakes
// one sleeping worker, which will steal from it. The ctx given to Drain is
// cancelled only when the ctx given to Shutdown ends first.
//
// By default a worker calls Drain with whatever a round took, so a trickle
// of values becomes one Drain call per value. [Config.MaxDelay] batches by
// size or time, as the OTel batch processors, Kafka's linger.ms or zap's
// BufferedWriteSyncer do: a worker that holds fewer than BatchSize values
// keeps them, tops them up as producers wake it and by stealing, and calls
// Drain when the batch is full or MaxDelay after it took the batch's first
// value. The push path does not change (no timestamp, no counter), an idle
// worker stays parked (the timer runs only while a batch is held), and
// Flush and Shutdown never wait for MaxDelay.
//
// [Config.Overflow] chooses which value a full ring sheds: [DropNewest]
// (the default: the push fails) or [DropOldest] (the push displaces the
// ring's oldest value in one step, vyukov.Ring's ForcePush, and succeeds).
// Both count what they shed; a push that finds room costs the same under
// both.
//
// # Idle workers
//
// The original polls: an idle worker sleeps 100 µs and looks again. In Go on
// small Linux VMs such a sleep lasts about 1 ms (the netpoller waits in whole
// milliseconds when every P is idle), and pollers cost CPU all the time. The
// default, [IdleWake], parks an idle worker on a doorbell instead: after a few
// empty rounds in which it yields, it sets its shard's sleeping flag, looks at
// its ring once more, and blocks until a producer rings (the first producer
// that finds the flag set clears it with a compare-and-swap and sends on a
// one-slot channel without blocking), Flush or Shutdown wakes it, or a
// safety-net timer of IdleSleep (100 ms) fires. [IdlePoll] keeps the
// original's polling. Adaptive polling (sleeps doubling from 100 µs to
// 100 ms, reset by work) was measured too and is not offered: it idles as
// cheaply as IdleWake, but a value waits for the sleep in progress, which
// after a quiet spell is up to 100 ms.
//
// An idle IdleWake sink costs a fraction of a percent of one core (mostly
// its recheck timer), an IdlePoll sink several percent, and a value pushed
// into an idle sink reaches Drain within microseconds when the pushing
// goroutine then blocks, or within a few milliseconds when it keeps its P
// (the Go scheduler must start the woken worker on another P).
//
// The doorbell is safe by a Dekker pair, the one such pair in the package:
// the worker stores the sleeping flag (a sequentially consistent store),
// then looks at the ring (vyukov's Len loads its tail); the producer
// claims its slot with a compare-and-swap on that tail, a locked
// instruction, then loads the flag. So either the producer sees the flag
// and rings, or the worker sees the value and does not park. The stamp
// publish that follows the claim is a release store (see
// internal/machine) and takes no part in the pair. A ring backend without
// that edge (chanring's Len is an unsynchronised read) could let a doorbell
// slip; the recheck timer bounds the delay to IdleSleep.
//
// # Flush and Shutdown
//
// [Sink.Flush] snapshots, under each shard's consumer lock, the number of
// values ever taken from the ring plus the ring's length, waits until that
// many have been taken, then waits until every worker has finished the batch
// it held; it wakes sleeping workers and polls with a backoff of 20 µs to
// 1 ms. It is correct with stealing and with live producers.
//
// [Sink.Shutdown] closes the rings (a vyukov ring's closed mark costs a push
// nothing; a ring without a Close of its own gets a guard that counts the
// pushes in flight), stops the workers, which drain their own rings (no more
// stealing) and exit, and the monitor, and returns nil, or an error wrapping
// ctx.Err() and saying how many values were left when ctx ends first: then
// the ctx of in-flight Drain calls is cancelled, workers exit after their
// current Drain, and what is left stays in the rings until a later Shutdown
// with a live ctx drains it. The Drain calls of the final drain get a ctx
// with Shutdown's deadline. Shutdown returns nil only when nothing was lost
// to its ctx, and every call after one that returned nil returns nil.
// [Sink.Done] is closed once the workers and the monitor have exited.
//
// Called with the ctx of a Drain call, or one derived from it, Flush and
// Shutdown return [ErrCalledFromDrain] at once, since they would wait for
// that very call; from inside Drain with an unrelated ctx they cannot tell,
// and wait until that ctx ends.
//
// # Observability
//
// [Sink.Stats] returns the name, the shard count, the ring capacity, the
// drop total, the values queued in the rings, the values taken for Drain
// (Drained), the Drain calls that panicked (DrainPanics), and the same per
// shard; it marshals to JSON with snake_case keys, for expvar (see the
// example). The overload monitor sums the drop counters every
// OverloadInterval (5 s) and calls OnOverload with the rise and the total
// when, and only when, the total rose; by default it logs at Error through
// Logger. It makes a last check when Shutdown begins, so the drops of the
// last, partial interval are reported. Drain panics are logged at Error too.
//
// # Costs
//
// A successful push costs one compare-and-swap on the ring's tail (the one
// locked instruction), one load and one release store of the slot's stamp,
// the value's copy and the load of the sleeping flag; Sink.Push adds the
// read of the CPU number (RDPID) and a table lookup, or the hash of a stack
// address. Neither allocates. A byte budget adds a SizeOf call and one
// atomic add (see [Config.MaxQueuedBytes]). A user's program gets the same instructions
// as the library's benchmarks: internal/hotpath's test reads the assembly
// of a program that imports only the library, and counts its locked
// instructions. The measured tables, for 1 to 256 producers, and the
// commands that reproduce them are in docs/benchmarks.md ("Push costs" and
// "The contended accept path").
package sink
