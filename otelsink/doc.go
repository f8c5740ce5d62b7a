// Package otelsink holds OpenTelemetry span and log processors built on the
// sharded sink of [github.com/shardedsink/shardedsink/sink]: replacements
// for sdktrace.NewBatchSpanProcessor and sdklog.NewBatchProcessor whose
// OnEnd and OnEmit never wait, never take a lock, and spread the items of
// many goroutines over several rings instead of one queue.
//
//	exporter, _ := otlptracegrpc.New(ctx)
//	tp := sdktrace.NewTracerProvider(
//		sdktrace.WithSpanProcessor(otelsink.NewSpanProcessor(exporter)))
//	defer tp.Shutdown(ctx) // drains, stops the workers, shuts the exporter down
//
//	logExporter, _ := otlploggrpc.New(ctx)
//	lp := sdklog.NewLoggerProvider(
//		sdklog.WithProcessor(otelsink.NewLogProcessor(logExporter)))
//	defer lp.Shutdown(ctx)
//
// # Model
//
// [SpanProcessor.OnEnd] ignores unsampled spans, and pushes a sampled one
// into a sink.Sink without a handle (sink.Sink.Push): into the ring of the
// calling goroutine's home shard (the sink hashes the goroutine's stack
// address), or the next shard's when that ring is full. When both are full
// the span is dropped and counted, and OnEnd returns; it never blocks (there
// is no equivalent of the BatchSpanProcessor's WithBlocking).
// [LogProcessor.OnEmit] does the same with record.Clone(): the SDK reuses the
// record once OnEmit returns. One drain worker per shard appends what it
// takes to one export batch, exported when it holds [WithMaxExportBatchSize]
// items or the batch timeout after its first item: the exporter gets the
// batches the SDK's processors would send, whatever the shard count, one
// call at a time (the SDK promises exporters that they never run
// concurrently). More shards make OnEnd cheaper, not the exporter faster.
//
// # Options and environment variables
//
// Both processors take the same [Option]s, which mean what the SDK's
// options of the same meaning do; options not given are read from
// OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
// OTEL_BSP_EXPORT_TIMEOUT and OTEL_BSP_SCHEDULE_DELAY (OTEL_BLRP_* for
// logs), durations in milliseconds, as the SDK reads them:
//
//	sdktrace / sdklog                               otelsink
//	WithMaxQueueSize, *_MAX_QUEUE_SIZE              WithMaxQueueSize (the total over the shards)
//	WithMaxExportBatchSize / WithExportMaxBatchSize,
//	  *_MAX_EXPORT_BATCH_SIZE                       WithMaxExportBatchSize
//	WithExportTimeout, *_EXPORT_TIMEOUT             WithExportTimeout
//	WithBatchTimeout / WithExportInterval,
//	  *_SCHEDULE_DELAY                              WithBatchTimeout
//	WithBlocking                                    (none: OnEnd never waits)
//	(none)                                          WithShards, WithIdleMode, WithLogger,
//	                                                WithOverloadReport, WithName, WithMeterProvider
//
// A variable that is not an integer, or that the processor cannot take (a
// size below 1, a negative duration; for logs a zero duration, which the log
// BatchProcessor ignores too, or a queue the shards cannot take), is
// reported to otel.Handle and ignored. An option always wins over its
// variable. ForceFlush and Shutdown export at once whatever the batch
// timeout says.
//
// Other differences: [WithMaxQueueSize] is the total over the shards
// (default [DefaultQueuePerShard] spans or [DefaultLogQueuePerShard] records
// per shard, with the sink's default of 4 shards per P); items keep their
// order only within one ring; a full ring drops the new item (the log
// BatchProcessor drops the oldest); a nil exporter is an error.
//
// # Guarantees
//
//   - Unsampled spans never enter the sink and are never exported or counted.
//   - ForceFlush returns once every item whose OnEnd or OnEmit returned
//     before the call has been handed to the exporter and that call has
//     returned (and, for logs, the exporter's ForceFlush has): nil, or an
//     error wrapping the last export error when exports failed since the
//     previous ForceFlush; ctx.Err() when ctx ends first. After Shutdown it
//     does nothing and returns nil, as the SDK's contract asks.
//   - Shutdown stops accepting items (an OnEnd or OnEmit that starts after
//     it drops and counts its item), exports what the rings hold, stops the
//     workers, waits for an export in progress, then calls the exporter's
//     ForceFlush (logs) and Shutdown. Later calls do nothing and return nil,
//     and no exporter call starts after the exporter's Shutdown.
//   - Shutdown returns when its ctx ends, even when the exporter ignores the
//     ctx of the export in progress: the batch in the exporter's hands then
//     counts as failed, the items not yet exported as dropped, the
//     exporter's late return changes no count, and the exporter's Shutdown
//     is called once that export has returned, on another goroutine, with a
//     ctx of its own bounded by the export timeout.
//   - Called with the ctx of an export call, Shutdown returns an error
//     wrapping sink.ErrCalledFromDrain at once and the processor keeps
//     running; ForceFlush does the same through the sink.
//   - Every item is accounted for: once Shutdown has returned and no OnEnd
//     or OnEmit is running, the sampled spans ended (records emitted) equal
//     Exported + Failed + Dropped of [Stats]. After a Shutdown whose ctx
//     ended while a drain worker was taking a batch from a ring, the sink's
//     counters (and so Dropped) can be off by that batch for the
//     microseconds the take lasts.
//   - Export errors go to otel.Handle, are counted in Stats, and are not
//     retried: retrying is the exporter's business, as with the SDK's batch
//     processors. An exporter that panics or calls runtime.Goexit fails its
//     batch: counted in Stats (ExporterPanics too) and reported through the
//     logger at most once a minute.
//
// # Observability
//
// [SpanProcessor.Stats] and [LogProcessor.Stats]; with [WithMeterProvider]
// (or without it, the global MeterProvider when the SDK's switch
// OTEL_GO_X_OBSERVABILITY is "true"), the SDK's semantic-convention
// self-observability metrics, observed from Stats at each collection, so
// that nothing is recorded on OnEnd or OnEmit: otel.sdk.processor.span.processed
// (an observable counter: exported without error.type, and error.type
// [ErrorTypeQueueFull], [ErrorTypeExportFailed] and [ErrorTypeShutdown]),
// otel.sdk.processor.span.queue.size and .queue.capacity (observable
// up-down counters, as the conventions define them), and the
// otel.sdk.processor.log.* equivalents, with otel.component.name (the
// processor's name) and otel.component.type. The sink's overload report (an
// Error log record through [WithLogger]'s logger at most every 5 s while
// items are being dropped, or your function with [WithOverloadReport]) comes
// on top.
//
// # Errors
//
// [New] and [NewLog] return an error wrapping [ErrInvalidOption] that names
// every bad option and its value (WithMaxQueueSize(0), WithShards(-1), a
// queue below the shard count or past sink.MaxRingCapacity per shard, a nil
// exporter, ...). [NewSpanProcessor] and [NewLogProcessor], whose shapes are
// those of the SDK's constructors, panic with that error instead.
//
// # Costs
//
// Measured side by side with the SDK's processors on a 2-core VM (the
// README has the tables, the load averages and the commands; OnEnd at 64
// goroutines: go test -run '^$' -bench 'OnEndThreads/exporter=noop/g=64/'
// -benchtime=10000x -count=3 .):
//
//   - OnEnd takes no lock and allocates nothing. Against the
//     BatchSpanProcessor's it depends on how often two threads really meet
//     on the BSP's one channel: at 64 goroutines 1.2 times the BSP's on a
//     loaded machine (where they seldom run at once) and 0.31 times on a
//     quiet one (33.5 to 36.5 ns against 107 to 120).
//   - OnEmit costs about what the log BatchProcessor's does: both are
//     dominated by copying the 584-byte record (Clone, then into the
//     queue), which a lock-free queue does not remove. It allocates nothing
//     for a record whose attributes fit inline.
//   - A whole span (Start and End through a TracerProvider) costs 0.9 to
//     1.3 µs of CPU with either processor; a CPU profile puts OnEnd at a
//     few percent of it. The SDK's span creation dominates.
//   - Exported share under a burst that saturates the CPU: with 1,024 spans
//     per shard a single goroutine reaches 2,048 slots, the BSP's whole
//     queue, and exports as much as the BSP. With many goroutines both
//     processors export less than the SDK's do (whole spans at 64
//     goroutines, log records at 16 and 64): lock-free producers never
//     block, so in a burst the drain workers run only when the producers
//     are preempted, while the SDK's producers park on its lock and hand
//     the CPU to its export goroutine. Every item is still exported or
//     counted.
package otelsink
