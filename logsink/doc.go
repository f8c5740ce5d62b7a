// Package logsink is a writer of formatted log records that does not wait
// for a slow destination (but for the records that matter, up to a bound:
// guarantee 1): the part of every non-blocking logger that comes
// after the formatting. A record (its bytes, with a level) is copied into
// a pooled buffer, in place for up to 352 bytes, whose pointer goes
// through a ring of a sharded sink (package sink); the sink's drain
// workers copy the bytes of a batch into one Write. When the destination falls behind and a ring fills, records
// are shed, errors last, and counted, and the stream itself says where: a
// record
//
//	{"time":"...","level":"WARN","msg":"logsink: dropped records","dropped":1234,"dropped_by_level":{"INFO":1234}}
//
// ([DroppedMessage]; a front-end writes its own, in its logger's format)
// is written in the gap.
//
// A Writer is an io.Writer, each Write one record, for any logger that
// writes a record in one Write (the standard log package, zerolog, zap's
// WriteSyncer):
//
//	w, err := logsink.New(os.Stdout, nil)
//	if err != nil { ... }
//	defer w.Close(context.Background()) // writes what is buffered
//	log.SetOutput(w)
//
// WriteLevel gives a record its level, so that errors are kept longest
// (zerolog's LevelWriter has the same method). A front-end that formats on
// the caller (slogsink, zapsink) uses the hooks of package
// logsink/frontend: its Stream.Begin refuses a record before it is
// formatted when it would be shed, and the record is formatted into a
// pooled Record and pushed from there. (The hooks this package exported
// before v0.1.0 are there now: Stream.Begin, Push and End, Call, Record,
// GetRecord, PutRecord, InlineSize, Drops, DropLevels, JSONReport,
// Options.Report as New's report, and Writer's Root, Fail, Panicked,
// MaxDrainTurn and Empty, as CountEmpty.)
//
// # Guarantees
//
//  1. A Write is a push. A push never waits on the destination, however
//     slow: a full ring sheds, and a push parks only while its drain
//     worker is short of CPU behind a destination that keeps up (or, with
//     Spill, while the spiller moves values to disk), for at most
//     HandOffWait in all (sink's "What a push waits for"; here
//     Options.SpillDir, and sink's default HandOffWait, 100 ms, shared by
//     the call's admission and its push; Options.DisableHandOff turns the
//     parking off). So loggers that outnumber the cores lose nothing into
//     a destination that keeps up. The one other wait is the one a caller
//     asks for: a record at or above KeepLevel whose ring is full waits up
//     to Options.KeepWait for room (guarantee 5). Otherwise: one copy of
//     the bytes into a pooled
//     record buffer and one push of its pointer into one ring, no lock of
//     the Writer's. A record of up to 352 bytes allocates nothing but when
//     the pool is empty (after a garbage collection emptied it, or while
//     the queue grows: a buffer of 416 bytes, which the pool then keeps); a
//     longer one allocates its bytes once, bounded in all by Options.MaxQueuedBytes. While its
//     ring is more than a quarter full, one caller per 100 µs yields the
//     processor (runtime.Gosched) before it writes, so that the drain
//     worker, runnable but behind busy loggers, gets a turn instead of
//     waiting for the scheduler's 10 ms slices (not in the first
//     millisecond of a Write, when the worker is still in it); and while
//     records are parked for room that a spill directory frees, one
//     caller per millisecond yields, so that those get a processor
//     instead of waiting out a busy caller's slices.
//  2. Output: the bytes of each record, whole, never interleaved with
//     another's, in the order they were accepted per [Stream] (Write uses
//     the Writer's own, shard 0; [Writer.Stream] gives a logger a shard of
//     its own, round-robin).
//  3. Accounting: once Close has returned and [Writer.Done] is closed (at
//     once when Close returned nil), the records written or begun are
//     exactly Written + Dropped + Errors + Abandoned + Empty ([Stats]).
//     Dropped: shed because a ring was full (in slots or in bytes), or
//     written after Close. Errors: lost in a Write that failed or
//     panicked, or in a front-end's formatting; a panic costs
//     its Write only, is counted in Panics, never reaches the caller, and
//     the first of each minute is logged through Options.Logger.
//     Abandoned: still buffered when Close's ctx ended. Empty: no bytes.
//  4. Every drop is reported in the stream exactly once, by a drop report
//     ([DroppedMessage]: the number lost at that point of the shard, by
//     level): after the last record the shard
//     accepted before them, in the slot of the first it accepted after.
//     Drops that no record follows are reported by Flush, or by Close
//     after the last record. Records written after Close are counted in
//     Dropped and reported nowhere else.
//  5. Errors are shed last: an eighth of each ring, and of its bytes, is a
//     reserve that only records at or above Options.KeepLevel (default
//     WARN) may fill: while records below it are shed, those at or above
//     it are kept until the reserve too is full. [Stats].DroppedByLevel
//     counts the drops per level.
//     A record at or above KeepLevel that finds even the reserve full
//     (or its shard's share of MaxQueuedBytes spent) waits up to
//     Options.KeepWait (default 1 ms) for room, parked, before it is shed:
//     counted in [Stats].WaitedOut, and the drop report says how many
//     waited out, by level ("waited_out", "waited_out_by_level"). Records
//     below KeepLevel never wait (guarantee 1 holds for them whatever
//     KeepWait is). A record larger than its shard's share of
//     MaxQueuedBytes is shed at once, and so is a record once Close has
//     begun (a waiting one is shed as Close begins). A record that finds
//     room pays nothing for KeepWait.
//  6. A drain turn is bounded: a worker takes at most BatchSize records
//     (default 1024) and writes them in Writes of at most 256 KiB from a
//     buffer of that size (a longer record is written alone, from its own
//     bytes). Writes never overlap.
//  7. Options.OnError gets every error of a Write, one call at a time,
//     outside every lock of the Writer's; a slow OnError holds up only the
//     goroutine that calls it.
//  8. [Writer.Flush] waits until everything written before it is written
//     to the destination; [Writer.Close] writes what is buffered and stops
//     the workers; both honour their ctx, and Close returns ctx.Err() when
//     it ends first.
//
// # When records are lost, and how to size for none
//
// Records are shed only when a ring is full, in slots or in bytes: when the
// destination, on average or for the length of one slow Write, takes the
// bytes more slowly than they are logged. A ring that fills because the
// drain worker is short of CPU sheds nothing (guarantee 1), but for one
// case that no timing tells from a slow Write: a Write whose system call
// returned while the worker waits for a processor. Callers that shed for
// a Write between 10 and 50 ms old yield the processor once each, so that
// the worker runs and ends it (sink's "What a push waits for"). A healthy file is
// slow at times too: on the 2-core VM of docs/benchmarks.md ("zapsink")
// one write(2) took 11.4 ms, and in 7 of 161 runs of 2 s from 64 or 256
// goroutines logging flat out, 2 to 61,700 records of some 5 M were shed
// that way; no run of its tables lost one. To lose nothing, size for the
// longest Write the destination may take at the peak rate: records per
// second per shard × the longest Write in seconds must fit in seven
// eighths of RingCapacity, and the bytes of those over 352 in seven eighths
// of MaxQueuedBytes/Shards. The default ring of 8192 records holds 7,168
// records below KeepLevel per shard. A queued record takes 416 bytes
// (its record buffer) and 16 more in its ring slot, so each doubling of
// RingCapacity costs up to 3.4 MiB per shard more while the ring is full.
//
// # A spill directory
//
// With Options.SpillDir a destination that stalls loses nothing until
// Options.SpillBytes (1 GiB by default) is full: while a Write runs
// longer than sink.SlowDrain, the sink's spiller moves the records of the
// rings to segment files in the directory, and a caller whose ring is
// full parks while it does (so callers go at the disk's pace, not the
// stalled destination's); the records are written afterwards, before the
// newer ones, in order per Stream. A Writer started on the directory
// writes first what the last one left (a Close whose ctx ended, a crash:
// what a crash can lose or write twice is the sink package's, "The spill
// tier"). Stats counts Spilled, Recovered, LostOnDisk and OnDisk, and the
// accounting of guarantee 3 becomes Written + Dropped + Errors +
// Abandoned + Empty + LostOnDisk + OnDisk - Recovered. What the directory
// saves a stalled pipe (64 goroutines, 1 s of 2 stalled, one call in 100
// an Error), and what it costs the longest call, is in docs/benchmarks.md,
// "Logging: what KeepWait saves a burst" (its SpillDir column).
//
// # Waiting for room
//
// Options.KeepWait trades a bounded wait of the callers that log at or
// above KeepLevel for the records a burst would cost them: a record that
// finds its ring full waits on sink's Handle.PushWait, with a ctx of
// KeepWait (allocated only then, with its timer), until the drain worker
// frees room. A burst into a destination that keeps draining loses nearly
// nothing with the default 1 ms; a destination that stops for longer than
// any wait keeps only the reserve's records whatever KeepWait is, and each
// Warn or Error record then costs its caller KeepWait. docs/benchmarks.md
// ("Logging: what KeepWait saves a burst") has the figures at 0, 1 ms and
// 10 ms, and
//
//	bash slogsink/testdata/keepwait.sh
//
// regenerates them. The waiting record holds a place in its shard
// (records that come meanwhile find the ring full, as it is), and Close
// sheds it at once.
//
// # Costs
//
// A Write costs one copy into a pooled record buffer and one push of its
// pointer, plus, when records
// were shed just before, the formatting of the report. The drain workers
// copy the records out and write them in batches. Idle, the workers park
// (the sink's IdleWake): no poller runs and no worker sets a timer (the
// default ring lets no doorbell slip); only the sink's monitor wakes, once
// a minute.
//
// # Where the rules live
//
// For a maintainer, each written once, in logsink/internal/engine, the
// machinery behind the Writer: the admission of a record and what the
// shard's queued count means (shardCounts in writer.go; Stream.Begin,
// admit and Push in stream.go), how a refused or shed record is counted
// and reported (drops.go), the Writer's one state and Close
// (Writer.closed in writer.go, close.go), the batches written to the
// destination (drain.go), the records' spill codec (entryCodec in
// record.go). This package holds the user's types and the options' checks
// and defaults (options.go).
package logsink
