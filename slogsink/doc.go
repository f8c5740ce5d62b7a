// Package slogsink is a log/slog handler that never blocks the goroutine
// that logs. [Handler.Handle] copies the record into a sharded sink
// (package sink) and returns; the sink's drain workers format whole batches
// of records with an ordinary slog handler (JSON by default) and write each
// batch with one Write. When the writer falls behind and the rings fill,
// records are shed and counted, and the log itself says where: a record
//
//	{"level":"WARN","msg":"slogsink: dropped records","dropped":1234}
//
// is written in the gap.
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
//  1. Handle never waits: it resolves the record's slog.LogValuer values,
//     clones the record (slog.Record.Clone, which allocates only for a record
//     of more than five attributes) and makes one push into one ring. A
//     record of up to five attributes costs no allocation beyond what the
//     slog.Logger itself makes.
//  2. Output: the same bytes that the Format handler would write if it were
//     called synchronously with the same records, except for their order
//     across handlers (tested for JSON and text, with AddSource,
//     ReplaceAttr, WithAttrs, WithGroup and LogValuers), and testing/slogtest
//     passes. Level, AddSource and ReplaceAttr are honoured; WithAttrs
//     resolves the attributes once, when it is called, and the Format
//     handler formats them once per derived handler, not per record.
//  3. Every record handled is written whole, in one Write with the rest of
//     its batch, or dropped and counted: once Close has returned nil,
//     [Handler.Written] + [Handler.Dropped] = records handled, unless a Write
//     failed ([Handler.Errors] counts those; OnError sees each error).
//  4. Every drop is reported in the stream exactly once, by a
//     [DroppedMessage] record at level WARN whose "dropped" attribute is the
//     number of records lost at that point of the handler's shard: after the
//     last record the shard accepted before them and before the first it
//     accepted after. With one goroutine logging through a shard this is
//     exact; with several, the report lands among the records they were
//     logging at that moment. Drops not yet followed by a record are
//     reported by Flush, or by Close after the last record. Records handled
//     after Close are counted in Dropped and reported nowhere else.
//  5. Order: every Handler (the one New returns, and every one that
//     WithAttrs or WithGroup returns) sends its records through one shard,
//     chosen round-robin when it is made, and each shard's records are
//     formatted and written by one worker in the order they were accepted
//     (work stealing is off). So the records that one goroutine logs
//     through one Handler (one slog.Logger) are written in the order it
//     logged them. Records logged through different Handlers, even by one
//     goroutine, may be written out of order; their time attributes say
//     when they were logged. Shards: 1 gives one order for every record, at
//     the price of one ring that every logging goroutine writes.
//  6. [Handler.Flush] waits until everything handled before it is written;
//     [Handler.Close] writes what is buffered and stops the workers; both
//     honour their ctx.
//
// A logger that every goroutine shares (slog.SetDefault(slog.New(h))) puts
// all its records through one shard. Give each request, connection or
// worker its own logger with With, as slog encourages anyway, and their
// records spread over the shards.
//
// Values are formatted after Handle returns: a LogValuer is resolved in
// Handle, but a pointer, slice or map that the caller changes after logging
// may be formatted with its later contents. The ctx given to Handle is not
// kept; the Format handler receives the drain's ctx.
//
// # Costs
//
// See the Benchmarks section of the README for the table and its command.
package slogsink
