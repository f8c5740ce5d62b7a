// Package slogsink is a log/slog handler that does not wait for a slow
// writer (but for the records that matter, up to a bound: guarantee 1).
// [Handler.Handle] formats the record on the goroutine that logs, with an
// ordinary slog handler (JSON by default), and pushes its bytes into a
// sharded sink in a pooled buffer (in place for a record of up to 352
// bytes); the sink's drain workers copy the bytes of a batch into one
// Write. When the writer falls behind and a ring fills, records are shed
// and counted, and the log itself says where: a record
//
//	{"level":"WARN","msg":"slogsink: dropped records","dropped":1234,"dropped_by_level":{"INFO":1234}}
//
// is written in the gap. The queueing, shedding, counting and writing are
// package logsink's, the record writer under zapsink and zerologsink too;
// its package doc has the mechanics behind each guarantee below.
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
//     is full waits up to Options.KeepWait for room (guarantee 5).
//     Otherwise a call costs what the synchronous Format handler costs,
//     plus one copy of the bytes and one push into one ring; with [JSON]
//     and [Text] (the default) it takes no lock of slogsink's, while
//     another Format formats one record at a time per New
//     (Options.Format). While its ring backs up, one caller per 100 µs
//     yields the processor so that the drain worker gets a turn (logsink's
//     guarantee 1). A record of up to 352 bytes allocates nothing but when
//     the pool is empty; a longer one allocates its bytes once, bounded in
//     all by Options.MaxQueuedBytes.
//  2. Output: the bytes the Format handler writes for the same records
//     when called synchronously, in the same order per Handler. WithAttrs
//     and WithGroup call their parent's Format handler's once, when they
//     are called, so a With's attributes are formatted then, as with
//     slog's own handlers: a value changed afterwards is written as it
//     was. testing/slogtest passes, and a fuzz target checks the bytes
//     against the synchronous handler. One difference: WithGroup("")
//     returns the receiver, as slog.Handler's contract says, where slog's
//     handlers open a group named "" (slog.Logger never passes one).
//  3. Accounting: once Close has returned and [Handler.Done] is closed,
//     every record handled is counted once in [Stats] (the identity is
//     there): Written, Dropped (shed, or handled after Close), Errors (a
//     Write or a Format handler, ReplaceAttr included, that failed or
//     panicked), Abandoned (buffered when Close's ctx ended, without a
//     SpillDir), Empty (the Format handler wrote no bytes), and the spill
//     tier's. A panic costs its record or its Write only, is counted in
//     Panics, never reaches the caller, and the first of each minute is
//     logged through Options.Logger.
//  4. Every drop is reported in the stream exactly once, by a
//     [DroppedMessage] record at level WARN whose "dropped" attribute is
//     the number of records lost at that point of the handler's shard (and
//     "dropped_by_level" the count per level): after the last record the
//     shard accepted before them, in the slot of the first it accepted
//     after (exact with one goroutine logging through a shard; with
//     several, among the records they were logging then). Drops that no
//     record follows are reported by Flush, or by Close after the last
//     record. Records handled after Close are counted in Dropped and
//     reported nowhere else.
//  5. Errors are shed last: an eighth of each ring, and of its bytes, is a
//     reserve that only records at or above Options.KeepLevel (default
//     WARN) may fill, and such a record that finds even the reserve full
//     waits up to Options.KeepWait (default 1 ms) for room before it is
//     shed, counted in [Stats].WaitedOut and in the report's
//     "waited_out"; records below KeepLevel never wait, and a record too
//     large for its shard's share of bytes, or handled once Close has
//     begun, is shed at once. [Stats].DroppedByLevel counts the drops per
//     level. docs/benchmarks.md ("Logging: what KeepWait saves a burst")
//     has what the wait saves and costs.
//  6. Order: every Handler (New's, and every one that WithAttrs or
//     WithGroup returns) sends its records through one shard, chosen
//     round-robin when it is made, whose worker writes them in the order
//     they were accepted: the records one goroutine logs through one
//     slog.Logger keep their order. Shards: 1 gives one order for every
//     record.
//  7. A drain turn is bounded: a worker takes at most BatchSize records
//     (default 1024) and writes them in Writes of at most 256 KiB, then
//     yields (logsink's guarantee 6).
//  8. [Handler.Flush] waits until everything handled before it is written;
//     [Handler.Close] writes what is buffered and stops the workers; both
//     honour their ctx, and Close returns ctx.Err() when it ends first.
//
// # When records are lost, and how to size for none
//
// Records are shed only when a ring is full, in slots or in bytes: when the
// writer, on average or for the length of one slow Write, takes the log's
// bytes more slowly than they are logged. A worker that merely lacks CPU
// does not make the log shed (guarantee 1), but for a Write whose system
// call returned while the worker waits for a processor, which reads as a
// slow one. To lose nothing, size RingCapacity and MaxQueuedBytes for the
// longest Write the writer may take at the peak rate, as logsink's "When
// records are lost" says (and what bounds that exception): the default
// ring of 8192 records per shard, 2 shards, holds 14,336 records below
// KeepLevel, 143 ms of a stall at 100,000 records per second. A writer
// slower than the log on average sheds whatever the size; Stats and the
// drop reports say how much.
//
// # Costs
//
// A logging call costs the Format handler's own formatting, one copy into
// a pooled record buffer and one push of its pointer; a With costs the
// Format handler's WithAttrs and one small allocation. The measured
// figures against slog.NewJSONHandler (the HTTP shape, a With, the Info
// call, a drain turn) and the command that reproduces them are in
// docs/benchmarks.md ("Logging"):
//
//	bash slogsink/testdata/bench.sh
package slogsink
