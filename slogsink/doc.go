// Package slogsink is a log/slog handler that does not wait for a slow
// writer (but for the records that matter, up to a bound: guarantee 1).
// [Handler.Handle] formats the record on the goroutine that logs, with an
// ordinary slog handler (JSON by default), and pushes its bytes into a
// sharded sink (package sink), in a pooled buffer whose pointer goes
// through a ring (in place for a record of up to 352 bytes); the sink's
// drain workers only copy the bytes of a batch into one Write. When the writer falls behind and a ring fills, records
// are shed and counted, and the log itself says where: a record
//
//	{"level":"WARN","msg":"slogsink: dropped records","dropped":1234,"dropped_by_level":{"INFO":1234}}
//
// is written in the gap. The queueing, shedding, counting and writing are
// package logsink's, the record writer that zapsink and zerologsink put
// zap and zerolog on too; slogsink is the slog front-end on it.
//
//	h, err := slogsink.New(file, &slogsink.Options{Level: slog.LevelDebug})
//	if err != nil { ... }
//	defer h.Close(context.Background()) // writes what is buffered
//	slog.SetDefault(slog.New(h))
//	reqLog := slog.With("request", id) // a handler, and a shard, of its own
//	reqLog.Info("served", "status", 200)
//
// # Guarantees
//
//  1. Handle is a push. A push never waits on the destination, however
//     slow: a full ring sheds, and a push parks only while its drain
//     worker is short of CPU behind a destination that keeps up (or, with
//     Spill, while the spiller moves values to disk), for at most
//     HandOffWait in all (sink's "What a push waits for"; here
//     Options.SpillDir and Options.DisableHandOff). The one other wait is
//     the one a caller asks for: a record at or above KeepLevel whose ring
//     is full waits up to Options.KeepWait for room (guarantee 5). It
//     formats the
//     record (as the synchronous Format handler would, plus one copy of
//     the bytes) and makes one push into one ring. With [JSON] and [Text]
//     (the default) it takes no lock of slogsink's: goroutines format in
//     parallel, through one Handler or many; another Format formats one
//     record at a time per New (Options.Format). While its ring is more
//     than a quarter full, one caller per 100 µs yields the processor
//     (runtime.Gosched) before it logs, so that the drain worker, runnable
//     but behind busy loggers, gets a turn instead of waiting for the
//     scheduler's 10 ms slices (not in the first millisecond of a Write,
//     when the worker is still in it): a few calls in a thousand pay a
//     scheduler round. A record of up to 352 bytes (five attributes with a
//     time, a level and a message take about 150 in JSON, 250 with
//     AddSource) allocates nothing but when the pool is empty: it is
//     formatted into a record buffer from a sync.Pool, whose pointer the
//     push hands to the ring, and the drain worker puts it back once
//     written. A longer record
//     allocates its bytes once, bounded in all by Options.MaxQueuedBytes.
//  2. Output: the bytes the Format handler writes for the same records
//     when called synchronously, in the same order per Handler: it is the
//     Format handler, run on the caller. WithAttrs and WithGroup call their
//     parent's Format handler's WithAttrs and WithGroup once, when they are
//     called, so a With's attributes are resolved and formatted then, as
//     with slog's own handlers, and a record's in Handle: a value changed
//     afterwards is written as it was. testing/slogtest passes, and a fuzz
//     target checks the bytes against the synchronous handler (every
//     attribute kind, nested and empty groups, LogValuers, trees of Withs
//     with values changed after them, ReplaceAttr, AddSource). One
//     difference: WithGroup("") returns the receiver, as slog.Handler's
//     contract says, where slog's handlers open a group named "" (through
//     slog.Logger, which never passes an empty name, the two agree).
//  3. Accounting: once Close has returned and [Handler.Done] is closed (at
//     once when Close returned nil), the records handled are exactly
//     Written + Dropped + Errors + Abandoned + Empty + LostOnDisk + OnDisk
//     - Recovered ([Stats]; the last three are 0 without
//     Options.SpillDir). Dropped:
//     shed because a ring was full (in slots or in bytes), or handled
//     after Close. Errors: lost in a Write that failed or panicked, or in a
//     Format handler (ReplaceAttr included) that returned an error or
//     panicked; a panic costs its record or its Write only, is counted in
//     Panics, never reaches the caller, and the first of each minute is
//     logged through Options.Logger. Abandoned: still buffered when Close's
//     ctx ended, without a SpillDir (with one, those go to disk: OnDisk,
//     for the next handler on the directory). Empty: the Format handler
//     wrote no bytes for them.
//  4. Every drop is reported in the stream exactly once, by a
//     [DroppedMessage] record at level WARN whose "dropped" attribute is
//     the number of records lost at that point of the handler's shard (and
//     "dropped_by_level" the count per level): after the last record the
//     shard accepted before them, in the slot of the first it accepted
//     after. With one goroutine logging through a shard this is exact;
//     with several, the report lands among the records they were logging
//     at that moment. Drops that no record follows are reported by Flush,
//     or by Close after the last record. Records handled after Close are
//     counted in Dropped and reported nowhere else.
//  5. Errors are shed last: an eighth of each ring, and of its bytes, is a
//     reserve that only records at or above Options.KeepLevel (default
//     WARN) may fill (the reports ride in their slots): while records below
//     it are shed, those at or above it are kept until the reserve too is
//     full. [Stats].DroppedByLevel counts the drops per level. A record
//     at or above KeepLevel that finds the reserve full too (or its
//     shard's share of MaxQueuedBytes spent) waits up to Options.KeepWait
//     (default 1 ms) for room before it is shed, counted in
//     [Stats].WaitedOut and in the report's "waited_out" and
//     "waited_out_by_level"; records below KeepLevel never wait, and a
//     record too large for its shard's share, or handled once Close has
//     begun, is shed at once. docs/benchmarks.md ("Logging: what KeepWait
//     saves a burst") has what the wait saves and costs.
//  6. Order: every Handler (New's, and every one that WithAttrs or
//     WithGroup returns) sends its records through one shard, chosen
//     round-robin when it is made, and each shard's records are written by
//     one worker in the order they were accepted. So the records one
//     goroutine logs through one Handler (one slog.Logger) are written in
//     the order it logged them; through different Handlers they may be
//     written out of order (their times say when they were logged).
//     Shards: 1 gives one order for every record.
//  7. A drain turn is bounded: a worker takes at most BatchSize records
//     (default 1024) and writes them in Writes of at most 256 KiB from a
//     buffer of that size (a longer record is written alone, from its own
//     bytes), then yields.
//  8. [Handler.Flush] waits until everything handled before it is written;
//     [Handler.Close] writes what is buffered and stops the workers; both
//     honour their ctx, and Close returns ctx.Err() when it ends first.
//
// # When records are lost, and how to size for none
//
// Records are shed only when a ring is full, in slots or in bytes: when the
// writer, on average or for the length of one slow Write, takes the log's
// bytes more slowly than they are logged. A worker that merely lacks CPU
// does not make the log shed: the loggers park until it has written
// (guarantee 1; docs/benchmarks.md has the healthy-file runs of the
// front-ends on logsink), but for a Write whose system call returned
// while the worker waits for a processor, which reads as a slow one
// (logsink's "When records are lost" says what bounds it). To
// lose nothing, size for the longest Write the writer may take (a disk
// stall, a network hiccup) at the peak rate: records logged per second per
// shard × the longest Write in seconds must fit in seven eighths of
// RingCapacity (the eighth above it is the reserve of KeepLevel), and the
// bytes of those over 352 in seven eighths of MaxQueuedBytes/Shards. The
// default ring of 8192 records per shard, 2 shards, holds 14,336 records
// below KeepLevel: 143 ms of a stall at 100,000 records per second. A
// queued record takes 416 bytes (its record buffer) and 16 more in its
// ring slot, so each doubling of RingCapacity costs up to 3.4 MiB per
// shard more while the ring is full. A writer slower than the log on average sheds whatever the
// size; Stats and the drop reports say how much.
//
// # Costs
//
// A logging call costs the Format handler's own formatting (on the caller,
// as with the synchronous handler), one copy into a pooled record buffer
// and one push of its pointer; a With costs the Format handler's WithAttrs and one small
// allocation. The drain workers copy the records out and write them in
// batches. The measured figures against slog.NewJSONHandler (the HTTP
// shape, a With, the Info call, a drain turn) and the command that
// reproduces them are in docs/benchmarks.md ("Logging"):
//
//	bash slogsink/testdata/bench.sh
package slogsink
