// Package sink is a sharded fire-and-forget sink for fan-in workloads, the
// Go rendering of the Rust crate sharded-sink: many goroutines hand values
// to a bounded set of rings without waiting, and one drain worker per ring
// hands them on in batches to an [Action], off the producers' path. A value
// that finds its ring full is shed and counted. A push never waits on the
// destination, however slow: a full ring sheds, and a push parks only while
// its drain worker is short of CPU behind a destination that keeps up (or, with Spill, while the spiller moves values to disk), for at
// most HandOffWait in all (see What a push waits for).
// For telemetry, logs, metrics and other streams that tolerate loss; not a
// durable queue (no at-least-once delivery, no order across shards).
//
//	s, err := sink.New(sink.Config[Event]{Name: "events"},
//		sink.ActionFunc[Event](func(ctx context.Context, batch []Event) {
//			ship(ctx, batch) // keep no reference into batch
//		}))
//	ok := s.Push(ev)         // false: the ring was full, ev was dropped and counted
//	...
//	err = s.Shutdown(ctx)    // producers stopped first; drains what is buffered
//
// A successful push is one lock-free TryPush with no lock, allocation or
// shared counter. [Sink.Push] puts producers that run at once on different
// rings, so its cost stays flat as producers are added on linux/amd64 with
// RDPID, and rises somewhat elsewhere, where homes are random: see Costs, and
// docs/benchmarks.md ("Push costs (sink)") for the tables and their commands.
//
// # Guarantees
//
//  1. A push into a ring with room returns after one TryPush on one ring
//     (two for a handle-less [Sink.Push] whose home ring is full; where a
//     CPU owns a group of shards (see Pushing), a handle-less push whose
//     home is full tries every other shard, up to Shards TryPush calls in
//     all). A push that every ring it tried refused waits as What a push
//     waits for says. [Handle.PushWait] and [Sink.PushWait] wait for
//     room until their ctx ends.
//  2. A successful push allocates nothing and writes to no shared counter,
//     lock or timer, but for one add to its shard's byte counter when
//     [Config.MaxQueuedBytes] is set. (The add is a compare-and-swap, so
//     that the counter cannot overflow.)
//  3. Every rejected push adds one to exactly one shard's drop counter, and
//     so does every value displaced under [DropOldest]: accepted + rejected
//     == attempted, [Sink.Dropped] == rejected + displaced, and once the
//     sink is quiet Drained + Queued + Dropped == attempted (Stats).
//     Under [DropNewest], the default, nothing is displaced. A PushWait
//     whose ctx ends first counts its value once, in Dropped and in
//     Stats().WaitedOut. Each drop has one reason, counted in Stats: a
//     ring full in slots, the byte budget (DroppedForBytes), a PushWait
//     that waited out (WaitedOut), a push once Shutdown had begun
//     (DroppedAfterShutdown), a value displaced (Displaced) or the spill
//     tier (DroppedForDisk).
//  4. Every accepted value that is not displaced is handed to Drain exactly
//     once, or is still in its ring (Stats().Queued) after a Shutdown whose
//     ctx ended, which a later Shutdown drains. With the spill tier, such
//     values are on disk instead, for the next sink on the directory, and
//     a crash can lose or repeat only what The spill tier says.
//  5. [Sink.Flush] returns once every value accepted before the call has been
//     handed to Drain and that Drain call has returned.
//  6. [Sink.Shutdown] closes the rings and drains every value that was
//     accepted, unless its ctx ends first; then its error says how many
//     values were left, and a later Shutdown with a live ctx resumes the
//     drain.
//  7. Once Shutdown has begun, every push returns false and is counted as
//     dropped. Every PushWait, waiting or new, returns [ErrShutdown] at
//     once and counts its value. A push that races the close either lands
//     before it and is drained, or fails and is counted.
//  8. A worker that has run for 2 ms yields the processor before its next
//     batch, so a Drain that never blocks cannot starve other goroutines
//     or timers on its P; it yields no more often than that, because a
//     yield puts it behind every busy goroutine of the process.
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
//     value. Both hold at every valid setting, up to math.MaxInt with sizes
//     up to 2^48: no sum of sizes overflows.
//
// Push returning true means the value was in a ring at that instant, not that
// it was drained. There is no count of accepted values, because keeping one
// would put a shared write on every push: count the true results yourself.
//
// # Pushing, and order
//
// Values are FIFO within a shard and unordered across shards. [Sink.Push]
// needs no handle and is the push for a flat cost: its home is the ring of
// the producer's CPU on linux/amd64 with RDPID (with the default of a ring
// per CPU, [DefaultShards], producers running at once never share one), and
// elsewhere (other systems, arm64, 386, a hypervisor that hides the CPU
// number) a ring chosen at random from the goroutine's stack. [Sink.Handle]
// (round-robin) and [Sink.HandleFor] (by a key of the caller's) push into one
// fixed ring: use them where one producer's or key's values must keep their
// order, since a goroutine that moves to another CPU moves its Push home.
// Stealing lets several workers drain one shard at once, so for order set
// DisableStealing too, or use one shard (one global FIFO, one contended ring).
//
// With CPU homes and more shards than CPUs (Config.Shards above the
// default), each CPU owns a group of shards and Sink.Push spreads its
// goroutines over its CPU's group by their stacks, so producers running at
// once still never share a ring and a burst fills every ring; a push whose
// home is full then tries every other shard before it drops, so the whole
// configured capacity takes a burst.
//
// # What a push waits for
//
// A push never waits on the destination, however slow: a full ring sheds,
// and a push parks only while its drain worker is short of CPU
// behind a destination that keeps up (or, with Spill, while the spiller
// moves values to disk), for at most HandOffWait in all.
//
// A ring fills for one of two reasons. Either the destination is slower
// than the pushes, and shedding is the answer; or the drain worker is
// short of CPU (goroutines that push outnumber the cores and never block,
// and Go's scheduler, which has no priorities, runs the worker behind all
// of them), and shedding only keeps the producers running while the ring
// stays full: on 2 cores most records of 64 goroutines logging into a
// healthy file were lost that way. The sink tells the two apart by the
// destination's pace, the shortest of the worker's recent calls into it:
// a worker short of CPU stretches calls, never shortens them. Behind a
// destination whose recent calls all took [FastCall] (250 µs) or more, or
// whose call in progress has run longer than [SlowDrain] (10 ms), or
// before its first call has ended one whose call is in progress, a push
// into a full ring sheds at once. Every push under [DropOldest] sheds
// at once (it displaces instead), and so does every push with
// [Config.DisableHandOff]. Behind a destination that keeps up, a push
// parks until the worker takes values and tries again, for at most
// [Config.HandOffWait] (100 ms) in all, and is then shed; a parked
// producer leaves the run queue, and the worker runs. Stats().HandOffs
// counts the pushes that parked; the overload report names the cause.
// The other waits are the ones a caller asks for: [Handle.PushWait] and
// [Sink.PushWait] wait for room until their ctx ends. The figures (push
// p50, p99.9 and max, shed and hand-offs, with the hand-off on and off,
// against slow, spinning and stalled destinations, idle and busy cores):
// docs/benchmarks.md, "What a push waits for". The protocol, and why each
// number is what it is: sink/handoff.go.
//
// # The spill tier
//
// With [Config.Spill] a directory on disk stands behind the rings, so
// that a stalled destination or a burst loses nothing up to a disk
// budget. While a Drain call of a shard (with a [CallTimer], a call into
// the destination) runs longer than SlowDrain, or the shard's tier still
// holds values, and its ring is a quarter full (or pushes are parked on
// it), the sink's spiller goroutine moves the ring's values to the
// shard's segment log (package sink/spill), and a push into the full ring
// parks, as in the hand-off, while the spiller takes (the overload
// monitor wakes the spiller once a Drain call has run SlowDrain). The
// shard's worker hands the log's values to
// Drain before the ring's, so a shard's values reach Drain in the order
// they were accepted, across memory and disk (a Handle's keep theirs; no
// worker steals from a shard whose values are on disk). Producers never
// touch the disk: Push is unchanged, and only a push that its ring
// refused looks at the tier.
//
// A push is shed, and counted in Stats().DroppedForDisk, only while the
// shard's share of Spill.MaxBytes is full, or for a second after a failed
// write (ENOSPC, EIO, a directory that went away), which is logged at most
// once a second; so are the values that a failed write or read, the [Codec]
// or a corrupt record lose. Nothing the disk does stops the sink or a producer.
// Every record carries a CRC-32C; a torn or corrupt one ends its
// segment's valid part and is counted (Stats().SpillCorrupt).
//
// A crash (SIGKILL, or the machine) loses the values in the rings and in
// batches, and those spilled since the last sync (every
// Spill.SyncInterval, a second by default; in a stall, once the spiller
// runs, a ring holds a quarter of its capacity at most). What a sink
// started on the
// directory hands Drain twice: what was read back and handed to Drain
// since the last sync. The rest of what was spilled reaches that sink's
// Drain first, once, in order (Stats().Recovered), also from the
// directories of shards it no longer has. A Shutdown that drains
// everything leaves none of the values on disk (each shard's directory
// keeps a cursor and a lock file). A Shutdown whose ctx ends before
// its drain is done moves what the rings still hold to disk, syncs and
// closes the tier: those values go to the next sink on the directory, not
// to a later Shutdown (what a full tier cannot take then is dropped and
// counted, in DroppedForDisk and SpillLost, so that none of it reaches a
// Drain before the older values on disk). The directory is the sink's alone (a lock on each
// shard's directory; directories 0700, files 0600). It cannot be combined
// with DropOldest; under MaxQueuedBytes a spilled value's bytes go back to
// the budget, and a value read back holds none.
//
// The tier costs a successful push nothing and a worker one atomic load
// per Drain call. Spilling costs an encode and an append per value on the
// spiller, and reading back a read and a decode per value on the worker:
// `go test -run '^$' -bench '^BenchmarkSpill$' ./sink/`.
//
// # Waiting for room
//
// For the values worth a bounded wait rather than a drop (an error record,
// an audit event, a message for a durable stream), [Handle.PushWait] and
// [Sink.PushWait] push at once when there is room and otherwise park until
// a drain worker frees room in the shard or ctx ends; then the value is
// dropped, counted in Dropped and Stats().WaitedOut, and ctx.Err() is
// returned. Waiters do not spin; a worker that frees room wakes as many as
// it has room for, oldest first, and pays one atomic load per batch when
// nobody waits. A value larger than its shard's byte share is refused at
// once ([ErrValueTooLarge]). Push itself is unchanged by PushWait.
//
// # Draining
//
// Each worker takes up to BatchSize values from its own ring, tops a short
// batch up by stealing from other shards (bounded by StealVictims and
// StealItems; stealing never waits and never touches the producer path),
// calls Drain with it at once ([Config.MaxDelay] batches a trickle by size or
// time instead), and yields once it has run for 2 ms. [Config.Overflow]
// chooses which value a full ring sheds, [DropNewest] (the push fails) or
// [DropOldest] (it displaces the oldest): both count it, and a push that
// finds room costs the same.
//
// An idle worker parks until a producer rings its doorbell ([IdleWake], the
// default) or polls every IdleSleep ([IdlePoll]). A push into the ring of a
// worker that is inside a Drain call rings nobody; so with IdleWake and
// stealing on, the overload monitor looks behind each Drain call that has
// run for [SlowDrain], and then every SlowDrain, and wakes an idle worker
// to steal the values waiting there: such a value reaches Drain within
// SlowDrain of its push while a worker is free. An idle
// sink (no Drain call in progress) keeps no timer for that: it costs a
// fraction of a percent of one core with IdleWake and several percent with
// IdlePoll; a value pushed into it reaches Drain in microseconds
// when the pusher then blocks, a few milliseconds when it keeps its P (go run
// ./bench/idle; docs/benchmarks.md, "Idle workers (sink)"). Over a ring whose
// Len does not synchronise with its push (ring/chanring's) a doorbell can
// slip: the value then waits for the recheck, IdleSleep (100 ms by default).
//
// # Flush, Shutdown and observability
//
// [Sink.Flush] is exact with stealing and live producers, and polls (it is
// not a hot path). [Sink.Shutdown] closes the rings, drains them and stops
// the workers and the monitor; one whose ctx ended can be resumed, and
// [Sink.Done] is closed once they have exited. Given the ctx of a Drain call
// (or one derived from it), both return [ErrCalledFromDrain] at once; from
// inside Drain with an unrelated ctx they cannot tell, and wait for that ctx.
// The overload monitor calls [Config.OnOverload] (by default an Error record
// through Logger) after each OverloadInterval in which drops rose, and once
// when Shutdown begins; Drain panics are logged at Error too. How it all
// works (homes, doorbell, stealing, flush): docs/design.md, "sink: mechanism".
//
// # Costs
//
// A successful push is a compare-and-swap on the ring's tail (its one locked
// instruction), a load and a release store of the slot's stamp, the value's
// copy and a load of the shard's sleeping flag (written only when its worker
// sleeps or wakes). Sink.Push adds a read of the CPU number and a table
// lookup (and a compare with a branch not taken, or with groups of shards a
// hash of a stack address), or a hash of a stack address; a byte budget
// adds a SizeOf call and an atomic compare-and-swap. A drain worker pays
// one atomic load per batch for PushWait when nobody waits. The PushWait
// costs (give-up delay, parked CPU, wake-up latency) are measured by
//
//	go test -run '^$' -bench PushWait -benchtime 1x ./sink/
//
// internal/hotpath's test checks that a program importing only the library
// compiles the push to these instructions.
//
// # Where the protocols live
//
// For a maintainer, each written once, in the file that implements it:
// the push and its home (sink.go, handle.go), the doorbell (worker.park,
// idle.go), the batch parity that Flush relies on (shard.seq, shard.go),
// the hand-off (handoff.go), PushWait's queue (wait.go), the phases and
// resumable Shutdown (above phaseOpen, lifecycle.go), the drop reasons and
// their counters (drops.go), the byte budget (budget.go), the spill tier
// (spilltier.go).
package sink
