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
//  3. Every rejected push adds one to exactly one shard's drop counter, so
//     accepted + rejected == attempted and [Sink.Dropped] == rejected.
//  4. While no ring is full and Shutdown has not been called, every accepted
//     value is handed to Drain exactly once.
//  5. [Sink.Flush] returns once every value accepted before the call has been
//     handed to Drain and that Drain call has returned.
//  6. A producer-quiesced [Sink.Shutdown] (producers stopped first) drains
//     every value that was accepted, unless its ctx ends first.
//  7. A push that races Shutdown may stay in its ring undrained: there is no
//     closed state, and a push after Shutdown is accepted until the ring is
//     full.
//  8. A worker yields the processor after every batch, so a Drain that never
//     blocks cannot starve other goroutines or timers on its P.
//  9. A panic in Drain is recovered and logged; that batch is lost and the
//     worker goes on.
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
// shard per P instead: a sync.Pool holds one *Handle per P, and a push takes
// the current P's handle, pushes and puts it back. Pool Get and Put touch only
// the current P's slot, so no shared cache line is written on success; the
// sink's round-robin cursor is used only when the pool misses (the first push
// on a P, or after the garbage collector cleared the pool). When the home ring
// is full, the push, and the P's home, move on to the next shard once, so a
// single busy P spills into the other rings before anything is shed.
//
// Measured alternatives (see Costs): a per-P round-robin cursor (the
// original's default) and a random shard per push (math/rand/v2) cost up to
// 4 times more from 4 producers up, because the producers running on the two
// cores then write the same rings' tails and the cache lines ping-pong
// between the cores; with a home shard per P they do not.
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
// Measured on a shared 2-core AMD EPYC VM, GOMAXPROCS=2, go1.26.8, load
// average 1.3 to 4 (other jobs running), ranges over several runs:
//
//	                                  IdleWake      IdlePoll      backoff
//	idle CPU, 2 shards (% of a core)  0.14-0.31     4.2-7.0       0.14-0.26
//	idle CPU, 8 shards                0.17-0.23     6.2-8.3       0.16-0.18
//	pickup p50, producer blocks       5-10 µs       3-12 µs       0.05-5.7 ms
//	pickup p50, producer keeps its P  0.12-2.6 ms   0.02-2.3 ms   1.1-2.4 ms
//
//	go run ./bench/idle [-mode wake|poll] [-shards 8] [-producer block|busy]
//	go test -run '^$' -bench Idle -benchtime 1x -count 2 ./sink/   # all three
//
// Idle CPU is the whole process's (getrusage), whose runtime alone idles at
// about 0.01 %; most of IdleWake's cost is the recheck timer, which is why it
// is 100 ms (at 10 ms it costs about 1 %). The pickup latency is the time
// from Push to Drain for a value pushed into an idle sink. When the pushing
// goroutine blocks soon after, the woken worker runs on its P within
// microseconds. When it keeps running, the worker must be started on another
// P; the Go scheduler backs off before it takes a goroutine just readied on a
// running P, and the OS must wake the idle P's thread, which on this loaded
// machine took 0.1 to 2.6 ms whatever the idle mode (a C program's futex
// wake-up on the same machine took 6 µs). Polling does as well in the
// blocking case only because its 100 µs timer has usually expired, unrun,
// when the producer's P next schedules, and it pays for that with 15 to 50
// times the idle CPU. The backoff's pickup was measured 2 to 4 ms after the
// previous value, before its sleeps had grown.
//
// The price of the doorbell on the push path is the flag load, which costs
// nothing measurable (on a line that only the worker writes, and only when it
// parks or wakes), and the wake-up code that makes [Handle.Push] too large for
// the compiler to inline: one call more than the original's push, 3 to 3.7 ns
// or 11 to 13 % at 1 producer (see Costs). A Dekker pair makes the doorbell safe: the worker
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
// [Sink.Shutdown] runs once; later calls return the first call's result. It
// stops the workers, which drain their own rings (no more stealing) and exit,
// and the monitor, and returns nil, or ctx.Err() when ctx ends first: then
// the ctx of in-flight Drain calls is cancelled, workers exit after their
// current Drain, and what is left stays in the rings. The Drain calls of the
// final drain get a ctx with Shutdown's deadline.
//
// # Observability
//
// [Sink.Stats] returns the name, the shard count, the drop total, the values
// queued in the rings and the same per shard; it marshals to JSON with
// snake_case keys, for expvar (see the example). The overload monitor sums
// the drop counters every OverloadInterval (5 s) and calls OnOverload with the
// rise and the total when, and only when, the total rose; by default it logs
// at Error through Logger. Drain panics are logged at Error too.
//
// # Costs
//
// Per-thread CPU time of a successful push, producers on locked OS threads,
// 4 shards, rings that hold the whole burst (0 % dropped), medians of 10
// runs on the same machine with nothing else running. drain=held holds the
// workers in Drain while the producers push, so the figures are the push
// path alone; drain=live lets them drain meanwhile:
//
//	producers              1        4        16       64       256
//	Handle.Push, held      31.6     32.8     70.2     64.8     58.3 ns
//	Sink.Push, held        37.0     37.7     43.1     39.9     40.3 ns
//	Handle.Push, live      103      32.0     124      70.6     60.0 ns
//	Sink.Push, live        93.8     37.2     40.2     40.9     44.9 ns
//
//	go test -run '^$' -bench Contended -benchtime 2000000x -count 10 ./sink/ > new.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl -filter '.unit:cpu-ns/op' new.txt
//
// Both allocate nothing. Held, Sink.Push stays between 37 and 43 ns from 1
// to 256 producers and costs at most 1.17 times Handle.Push, because with a
// home shard per P the two producers running at a time never write the same
// ring; draining, only its 1-producer row rises (93.8 ns), for the reason
// given below for Handle.Push. Handles are
// spread round-robin, so from 16 producers on the two running producers
// often share a ring and its tail: Handle.Push then costs 1.8 to 2.2 times
// its 1-producer cost (on a machine shared with other jobs, where the two
// cores rarely push at the same instant, it measured 1.0 to 1.3 times).
// With one producer and its worker draining at the same time, the worker
// pops right behind the producer and they trade the slots' cache lines (103
// ns against 31.6 held). IdlePoll costs the same, so the doorbell is not the
// cause.
//
// The alternatives, held, as ranges over two sets of 10 runs taken while
// other jobs ran (load average 4 to 6; the same command with -bench
// PushDesign):
//
//	producers                        1          4          16         64         256
//	per-P round-robin Push     33.9-35.2  72.3-83.4   105-140    109-141   50.8-158 ns
//	math/rand/v2 shard Push    31.4-32.0  44.1-56.8  46.2-137   56.9-162  52.0-82.1 ns
//	Handle.Push, no flag load  27.4-28.0  27.7-28.0  56.9-85.9  47.6-83.7  48.5-50.9 ns
//	  the same, not inlined    31.5-31.9  31.7-31.9  32.1-73.2  32.1-80.6  35.4-84.8 ns
//
// Without contention (1 and 4 producers) the flag load itself costs nothing
// (Handle.Push against the same push without the load, neither inlined); the
// doorbell's wake-up call makes Handle.Push too large to inline (cost 157,
// budget 80), which costs 3 to 3.7 ns, 11 to 13 %, against the original's
// push path. With more producers the spread of every row is ±20 to 100 %.
package sink
