// Package otelsink holds OpenTelemetry span and log processors built on the
// sharded sink of [github.com/shardedsink/shardedsink/sink], in place of
// sdktrace.NewBatchSpanProcessor and sdklog.NewBatchProcessor: their OnEnd
// and OnEmit take no lock, spread over several rings, and wait only as
// a push does (Model).
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
// [SpanProcessor.OnEnd] ignores unsampled spans and pushes a sampled one
// with sink.Sink.Push into its goroutine's home ring (or the next shard's,
// when that one is full; or every other shard's, where a CPU owns a group
// of shards, as with the default shard count and CPU homes); when those are
// full the span is dropped and counted, and OnEnd returns (there is no
// WithBlocking). OnEnd is a push. A push never waits on the destination,
// however slow: a full ring sheds, and a push parks only while its drain
// worker is short of CPU behind a destination that keeps up (or, with
// Spill, while the spiller moves values to disk), for at most HandOffWait
// in all (sink's "What a push waits for"; otelsink has no spill tier, and
// the exporter's calls are the destination's).
// [LogProcessor.OnEmit] does the same with record.Clone(), since the SDK
// reuses the record. The drain workers of all the shards fill one export
// batch, exported when it holds [WithMaxExportBatchSize] items or one batch
// timeout after its first item, one call at a time: the exporter gets the
// batches the SDK's processors would send, whatever the shard count.
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
//	WithBlocking                                    (none: OnEnd never waits on the exporter)
//	(none)                                          WithShards, WithIdleMode, WithLogger,
//	                                                WithOverloadReport, WithName, WithMeterProvider
//
// A variable that is not an integer, or that the processor cannot take (a
// size below 1, a negative duration, for logs a zero one, a queue the
// shards cannot take), is reported to otel.Handle and ignored; an option
// wins over its variable. ForceFlush and Shutdown export at once.
//
// Other differences: [WithMaxQueueSize] is the total over the shards
// (default [DefaultQueuePerShard] spans or [DefaultLogQueuePerShard]
// records per shard, 4 shards per P); items keep their order only within
// one ring; a full ring drops the new item (the log BatchProcessor, the
// oldest).
//
// # Guarantees
//
//   - Unsampled spans are never queued, exported or counted.
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
//     Exported + Failed + Dropped of [Stats] (after a Shutdown cut short by
//     its ctx, give a batch being taken its microseconds).
//   - Export errors go to otel.Handle, are counted in Stats, and are not
//     retried: retrying is the exporter's business, as with the SDK's batch
//     processors. An exporter that panics or calls runtime.Goexit fails its
//     batch: counted in Stats (ExporterPanics too) and reported through the
//     logger at most once a minute.
//
// # Observability
//
// [SpanProcessor.Stats] and [LogProcessor.Stats]; with [WithMeterProvider]
// (or the global MeterProvider when OTEL_GO_X_OBSERVABILITY is "true"), the
// SDK's semantic-convention metrics otel.sdk.processor.span.processed
// (error.type [ErrorTypeQueueFull], [ErrorTypeExportFailed],
// [ErrorTypeShutdown]), .queue.size and .queue.capacity, and their log
// equivalents, observed from Stats at each collection (nothing is recorded
// on OnEnd or OnEmit) and still reported after Shutdown; the sink's
// overload report goes through [WithLogger] or [WithOverloadReport].
//
// # Errors
//
// [New] and [NewLog] return an error wrapping [ErrInvalidOption] that names
// every bad option and its value (WithMaxQueueSize(0), WithShards(-1), a
// queue below the shard count, a nil exporter, ...); [NewSpanProcessor] and
// [NewLogProcessor], shaped as the SDK's constructors, panic with it.
//
// # Costs
//
// OnEnd and OnEmit into a ring with room take no lock and allocate nothing
// (OnEmit copies the record, as the SDK's processor does). Measured side
// by side with the SDK's processors (README.md has the tables and the
// commands): a whole span costs about the same with either, the SDK's
// span creation dominating. Under a burst that saturates the CPU, from
// many goroutines, otelsink exports more of the items than the SDK's
// processors, because a producer whose ring is full parks until the drain
// worker has run (the sink's hand-off), and pays for it: OnEnd and OnEmit
// then cost several times the SDK's CPU per item, where the SDK's
// processors spend less by dropping. Every item is exported or counted.
package otelsink
