// Package sink is a sharded fire-and-forget sink for fan-in workloads: many
// goroutines hand values to a bounded set of rings without waiting, and one
// drain worker per ring hands them on in batches to an [Action], off the
// producers' path. When a ring is full the value is shed and counted instead
// of slowing the producer down.
//
// It is the Go rendering of the Rust crate sharded-sink. Its design value is
// flat, predictable producer cost under contention: a successful push is one
// lock-free TryPush on one shard's ring, with no lock, no allocation, and no
// counter touched. It suits telemetry, logging, metrics and other streams
// that tolerate loss. It is not a durable queue: there is no at-least-once
// delivery, no order across shards, and no resharding.
//
//	s, err := sink.New(sink.Config[Event]{Name: "events"},
//		sink.ActionFunc[Event](func(ctx context.Context, batch []Event) {
//			ship(ctx, batch) // keep no reference into batch
//		}))
//	h := s.Handle()          // hot producers keep a handle
//	ok := h.Push(ev)         // false: the ring was full, ev was dropped and counted
//	...
//	err = s.Shutdown(ctx)    // producers stopped first; drains what is buffered
//
// # Guarantees
//
//  1. A push never blocks: it returns after one TryPush on one ring (two for
//     a handle-less [Sink.Push] whose home ring is full).
//  2. A successful push allocates nothing and writes to no shared counter,
//     lock or timer. It loads the shard's sleeping flag, a cache line that
//     is written only when the worker falls asleep or wakes (see Idle below).
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
// [Sink.Handle] hands out handles round-robin over the shards (the
// original's issue()); a handle is immutable and costs nothing to keep, so
// hot producers take one and keep it. [Sink.HandleFor] maps a key of the
// caller's (a connection, a tenant) to a shard, the Go rendering of the
// original's thread-local home shard: the same key always maps to the same
// shard of a sink, so that key's values keep their order.
//
// [Sink.Push] needs no handle. Go has no thread-locals, so it keeps a home
// shard per goroutine instead, derived from the address of a variable on
// the calling goroutine's stack: each goroutine's stack is its own block of
// memory, so goroutines spread over the shards and one goroutine finds the
// same shard push after push, at the cost of a hash and no shared write.
// When the home ring is full, the push moves on to the next shard once, so a
// single busy goroutine spills into a second ring before anything is shed.
// Homes are random, so two goroutines may share one; that is why the
// default shard count is 4 × GOMAXPROCS (clamped to [1, 32]): the
// goroutines running at one time then write different rings most of the
// time, whether they use Sink.Push or handles taken round-robin.
//
// Measured alternatives (see Costs): a sync.Pool holding a home handle per
// P (the previous design: no two Ps ever share a home, but a Get and a Put
// cost about as much as the push itself), a per-P round-robin cursor (the
// original's default) and a random shard per push (math/rand/v2); the last
// two make the producers running on different cores write the same rings'
// tails, and cost several times more under contention.
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
// Flush and Shutdown never wait for MaxDelay. A trickle of 1,000 values a
// second with MaxDelay 100 ms gives about ten Drain calls a second of about
// 100 values each; a test under testing/synctest checks it, and
//
//	go run ./bench/idle -rate 1000 -max-delay 100ms
//
// measures it in real time.
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
// (the Go scheduler must start the woken worker on another P). The README's
// "Idle workers" section has the measured table, from:
//
//	go run ./bench/idle [-mode wake|poll] [-shards 8] [-producer block|busy]
//
// The price of the doorbell on the push path is the flag load, which costs
// nothing measurable (on a line that only the worker writes, and only when it
// parks or wakes), and the wake-up code that makes [Handle.Push] too large for
// the compiler to inline: one call more than the original's push (see
// Costs). A Dekker pair makes the doorbell safe: the worker
// stores the flag, then looks at the ring; the producer pushes, then loads the
// flag. Go's atomics are sequentially consistent, and the default vyukov ring
// pushes with a compare-and-swap on its tail and reads that tail in Len, so
// one of the two sees the other. A ring backend without that edge (chanring's
// Len is an unsynchronised read) could let a doorbell slip; the recheck timer
// bounds the delay to IdleSleep.
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
// A successful push costs one compare-and-swap on the ring's tail, one load
// and one store of the slot's stamp, the value's copy, and the load of the
// sleeping flag; Sink.Push adds the hash of a stack address. Neither
// allocates. The atomics are sync/atomic's functions on plain fields, so a
// user's program gets the same inline instructions as the library's own
// benchmarks (internal/hotpath's test reads the assembly of a program that
// imports only the library). The README's "Push costs" has the measured
// tables for 1 to 256 producers, from one command:
//
//	go run ./bench/pushcost
//
// The alternatives measured for the handle-less push and the shard count,
// per-thread CPU ns per accepted push of an 8-byte value, producers on
// locked OS threads, medians of 5 runs (min-max), on a 2-core AMD EPYC VM
// (GOMAXPROCS=2, go1.26.8, load average 0.6 before); "shards=P" rows use
// GOMAXPROCS shards, the default before, the others 4 × GOMAXPROCS:
//
//	| BenchmarkPushDesignAlternatives: cpu ns per accepted push, median (min-max) | 1 | 4 | 16 | 64 | 256 |
//	|---|---:|---:|---:|---:|---:|
//	| held, 8 B, Sink.Push | 11.4 (9.85-14.5) | 22.9 (18.6-24.0) | 22.0 (21.6-23.6) | 19.9 (18.0-22.4) | 19.8 (17.4-20.6) |
//	| held, 8 B, Sink.Push(shards=P) | 13.2 (9.90-14.2) | 45.6 (32.5-62.7) | 34.9 (30.2-44.9) | 30.9 (29.5-35.1) | 57.8 (53.8-59.6) |
//	| held, 8 B, Sink.Push-pool-per-P(shards=P) | 26.6 (23.7-28.3) | 24.2 (22.6-25.6) | 22.8 (22.3-24.6) | 23.1 (21.7-24.8) | 58.5 (52.9-62.2) |
//	| held, 8 B, Sink.Push-pool-per-P | 23.5 (22.3-25.0) | 26.0 (21.7-27.7) | 26.5 (24.7-27.5) | 28.5 (22.8-29.4) | 77.5 (69.8-83.2) |
//	| held, 8 B, Sink.Push-per-P-round-robin | 24.3 (20.4-26.1) | 53.8 (28.5-62.2) | 62.6 (59.5-65.6) | 52.4 (43.0-60.8) | 64.7 (50.5-68.1) |
//	| held, 8 B, Sink.Push-math-rand | 21.1 (18.1-22.9) | 41.4 (36.3-107) | 40.0 (38.7-42.8) | 38.6 (34.7-48.7) | 39.3 (34.5-41.1) |
//	| held, 8 B, Handle.Push | 11.4 (9.13-11.7) | 8.94 (7.58-12.3) | 27.8 (19.3-30.0) | 16.9 (16.6-18.7) | 14.9 (11.2-20.3) |
//	| held, 8 B, Handle.Push(shards=P) | 8.91 (8.81-9.84) | 52.3 (38.6-56.1) | 38.5 (30.9-44.2) | 30.2 (24.5-32.6) | 36.4 (33.6-38.3) |
//	| held, 8 B, Handle.Push(shards=2xP) | 7.45 (7.32-7.53) | 7.52 (7.35-9.16) | 32.0 (30.1-34.9) | 20.5 (17.2-24.2) | 18.2 (16.4-19.4) |
//	| held, 8 B, Handle.Push-without-flag-load(IdlePoll) | 7.32 (7.18-7.99) | 12.1 (10.3-12.6) | 23.7 (21.7-31.0) | 19.6 (18.7-21.2) | 14.7 (9.30-16.1) |
//	| draining, 8 B, Sink.Push | 12.8 (11.1-16.8) | 16.1 (13.4-17.8) | 18.8 (14.7-20.5) | 17.9 (16.7-18.7) | 16.0 (14.8-17.9) |
//	| draining, 8 B, Sink.Push(shards=P) | 18.5 (14.4-24.1) | 32.2 (23.4-45.1) | 38.4 (27.9-39.5) | 28.9 (25.8-55.1) | 43.9 (36.5-51.4) |
//	| draining, 8 B, Sink.Push-pool-per-P(shards=P) | 35.0 (28.5-39.4) | 19.9 (18.8-27.6) | 23.4 (20.9-30.3) | 23.7 (22.2-27.3) | 68.2 (52.4-73.3) |
//	| draining, 8 B, Sink.Push-pool-per-P | 32.3 (27.9-35.5) | 23.6 (20.6-27.5) | 24.4 (23.2-27.5) | 21.3 (20.1-26.6) | 53.3 (47.6-64.8) |
//	| draining, 8 B, Sink.Push-per-P-round-robin | 51.0 (47.9-56.2) | 42.2 (41.2-45.3) | 43.4 (42.6-46.3) | 44.1 (42.1-47.9) | 44.6 (40.7-48.1) |
//	| draining, 8 B, Sink.Push-math-rand | 49.1 (41.8-55.7) | 38.0 (33.4-54.8) | 37.6 (36.3-40.1) | 40.3 (38.6-41.8) | 43.8 (42.8-106) |
//	| draining, 8 B, Handle.Push | 13.0 (12.4-15.4) | 11.0 (9.79-11.3) | 19.1 (16.0-25.8) | 19.9 (18.3-22.6) | 15.8 (14.8-18.7) |
//	| draining, 8 B, Handle.Push(shards=P) | 14.3 (13.5-17.6) | 52.3 (38.2-61.4) | 39.0 (27.6-41.1) | 36.9 (26.2-42.5) | 41.9 (35.9-46.9) |
//	| draining, 8 B, Handle.Push(shards=2xP) | 11.6 (10.2-14.2) | 11.7 (11.2-12.8) | 35.8 (27.4-39.3) | 24.9 (24.2-27.3) | 21.2 (19.7-23.5) |
//	| draining, 8 B, Handle.Push-without-flag-load(IdlePoll) | 11.9 (11.1-13.6) | 11.0 (9.98-12.5) | 26.2 (23.5-30.5) | 15.7 (15.1-18.5) | 14.9 (11.5-19.2) |
//
//	go run ./bench/pushcost -design
//
// The stack-address home (Sink.Push) costs about 2 ns more than a handle
// at one producer and is the cheapest handle-less push at every count. The
// sync.Pool of home handles per P never lets two Ps share a ring, but its
// Get and Put cost more than the push itself, and at 256 producers it cost
// 53 to 78 ns. A per-P round-robin cursor and a random shard per push make
// the producers running on the two cores write the same rings' tails and
// cost 2 to 4 times more. More shards than Ps roughly halve the cost of
// both Sink.Push and Handle.Push once there are more producers than cores
// (GOMAXPROCS shards: 30 to 58 ns; 4 × GOMAXPROCS: 9 to 28 ns). The
// doorbell's flag load is within the spread of the table: Handle.Push at
// one producer measured 7.5 to 11.4 ns across its rows, the original's
// push path without the load 7.3 ns.
package sink
