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
// One Info call with five attributes, each goroutine through a logger of its
// own made with With, slogsink (default options) against slog's synchronous
// JSON handler over the same writer: a temporary file, and a writer that
// sleeps 1 ms per Write. ns per call, the share of records slogsink shed, and
// bytes written per call (sync / slogsink). Neither allocates (0 allocs/op).
// Medians of 10 runs on a shared 2-core AMD EPYC VM, GOMAXPROCS=2, go1.26.8,
// load average 7.6 to 12 (other jobs running):
//
//	goroutines               1          2          4          16         64
//	file   sync              5441       2872       3096       3042       3565 ns
//	file   slogsink          1296       686        641        1043       867 ns
//	file   shed              42 %       73 %       90 %       96 %       98.5 %
//	file   bytes/call        146/84     146/40     146/15     146/5.6    147/2.1
//	1 ms   sync              1.16 ms    1.30 ms    1.26 ms    1.20 ms    1.19 ms
//	1 ms   slogsink          1563       2369       1528       1778       1242 ns
//	1 ms   shed              48 %       77 %       88 %       95 %       98 %
//	1 ms   bytes/call        146/76     146/34     146/18     146/7.8    147/3.1
//
//	go test -run '^$' -bench 'Info|Request' -count 10 ./slogsink/ > slog.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /handler slog.txt
//
// The calls never wait: against a 1 ms writer slogsink's call costs what it
// costs against a file, where the synchronous handler waits for every
// Write. These loops log flat out, so they overload any handler, and the
// table shows what slogsink does then: it sheds. With one goroutine it
// still writes more than the synchronous handler (batches of thousands of
// records per write(2) instead of one each); from two goroutines on, the
// loggers keep both cores busy, a drain worker gets the CPU only when the Go
// scheduler preempts a logger, and the handler writes less than the
// synchronous one would (at 16 goroutines to a file, a tenth as many bytes
// per second). That is the trade: the caller never pays for the log, and
// the log gets what CPU is left. Batches of a whole ring (the default
// BatchSize) let a worker drain the most per turn: at 16 goroutines to a
// file, 4.3 times the bytes of batches of 256 (7.3 against 1.7 bytes per
// call), and the calls cost 1.5 times as much (1.72 against 1.16 µs), the
// CPU that the worker's longer turns take from the loggers (medians of 5,
// load average 9.5):
//
//	go test -run '^$' -bench BatchSize -count 5 ./slogsink/
//
// # Choosing the shard count
//
// Shards is the number of drain workers, which format on the same cores as
// the requests. BenchmarkRequest serves requests from 16 goroutines (8 per
// P): each hashes 4 KiB or 64 KiB and logs 8 records into a file. p99 of the
// request and of the Info call, and the share of records shed, same run
// and machine as above (GOMAXPROCS=2, so 2 shards is also GOMAXPROCS here):
//
//	                          sync       1 shard    2 shards   8 shards
//	4 KiB   request           56.9 µs    25.9 µs    18.6 µs    16.3 µs
//	        p99 request       4.90 ms    92.6 µs    52.6 µs    90.0 µs
//	        p99 Info call     22.0 µs    932 ns     811 ns     906 ns
//	        p99.9 Info call   36.9 ms    26.5 µs    18.5 µs    29.1 µs
//	        shed              0          94.7 %     91.7 %     71.4 %
//	64 KiB  request           148 µs     139 µs     105 µs     102 µs
//	        p99 request       43.3 ms    10.9 ms    4.91 ms    5.33 ms
//	        p99 Info call     50.1 µs    1.09 µs    1.23 µs    1.26 µs
//	        p99.9 Info call   86.8 ms    24.0 µs    21.8 µs    20.0 µs
//	        shed              0          76.7 %     61.2 %     3.9 %
//
// More workers win more of the scheduler's turns, so they shed less, and
// they spend those turns formatting, on the requests' cores. In this run the
// requests did not measurably pay for it; in a second run, 2 against 8
// shards side by side (-bench 'Request/.*/handler=slogsink-(2|8)' -count 5,
// load average 5 to 10), the 64 KiB requests
// took 132 µs at 2 shards and 180 µs at 8 (p99 12.1 ms and 83.7 ms), with
// 48.5 % and 2.0 % shed. The default is 2 shards: a logging call should not
// take the request's CPU, and what it sheds is counted and reported in the
// log. Raise Shards when a complete log matters more than request latency.
// The synchronous handler sheds nothing and makes every request wait for
// the file: p99 request 43 ms, p99.9 of the Info call 87 ms.
package slogsink
