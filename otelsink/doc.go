// Package otelsink holds OpenTelemetry span and log processors built on the
// sharded sink of [github.com/shardedsink/shardedsink/sink], in place of
// sdktrace.NewBatchSpanProcessor and sdklog.NewBatchProcessor: their OnEnd
// and OnEmit take no lock, spread over several rings, and wait only as
// a push does (Model).
//
//	// exporter: any sdktrace.SpanExporter (otlptracegrpc.New(ctx), say)
//	tp := sdktrace.NewTracerProvider(
//		sdktrace.WithSpanProcessor(otelsink.NewSpanProcessor(exporter)))
//	defer tp.Shutdown(ctx) // drains, stops the workers, shuts the exporter down
//
//	// logExporter: any sdklog.Exporter (otlploggrpc.New(ctx), say)
//	lp := sdklog.NewLoggerProvider(
//		sdklog.WithProcessor(otelsink.NewLogProcessor(logExporter)))
//	defer lp.Shutdown(ctx)
//
// # Model
//
// [SpanProcessor.OnEnd] ignores unsampled spans and pushes a sampled one
// with sink.Sink.Push into its goroutine's home ring (or another shard's,
// when that one is full); when those are full the span is dropped and
// counted, and OnEnd returns (there is no WithBlocking). OnEnd is a push.
// A push never waits on the destination, however slow: a full ring sheds,
// and a push parks only while its drain worker is short of CPU behind a
// destination that keeps up (or, with Spill, while the spiller moves
// values to disk), for at most HandOffWait in all (sink's "What a push
// waits for"; otelsink has no spill tier, and the exporter's calls are
// the destination's). [LogProcessor.OnEmit] does the same with
// record.Clone(), since the SDK reuses the record. The drain workers of
// all the shards fill one export batch, exported when it holds
// [WithMaxExportBatchSize] items or one batch timeout after its first
// item, one call at a time: the exporter gets the batches the SDK's
// processors would send, whatever the shard count.
//
// # Options and environment variables
//
// Both processors take the same [Option]s, which mean what the SDK's
// options of the same meaning do; an option not given is read from its
// OTEL_BSP_* variable (OTEL_BLRP_* for logs), as the SDK reads it, and a
// variable the processor cannot take is reported to otel.Handle and
// ignored. [WithMaxQueueSize] is the total over the shards (default
// [DefaultQueuePerShard] spans or [DefaultLogQueuePerShard] records per
// shard); items keep their order only within one ring; a full ring drops
// the new item (the log BatchProcessor, the oldest). The SDK's options
// and variables against otelsink's, the defaults and the other
// differences: otelsink/README.md, "Migrating".
//
// # Guarantees
//
// Each is stated in full, with the tests that check it, in
// otelsink/README.md, "Guarantees".
//
//   - Unsampled spans are never queued, exported or counted.
//   - The exporter's calls never overlap, and none follows its Shutdown.
//   - ForceFlush returns once every item whose OnEnd or OnEmit returned
//     before the call has been exported: nil, an error wrapping the last
//     export error since the previous ForceFlush, or ctx.Err() when ctx
//     ends first; after Shutdown it does nothing and returns nil.
//   - Shutdown stops accepting items, exports what the rings hold, then
//     flushes (logs) and shuts the exporter down; later calls return nil.
//     It returns when its ctx ends, even while an export that ignores its
//     ctx runs on: what it could not export counts as failed or dropped.
//   - Called with the ctx of an export call, Shutdown and ForceFlush
//     return an error wrapping sink.ErrCalledFromDrain at once.
//   - Every item is accounted for: once Shutdown has returned, the sampled
//     spans ended (records emitted) equal Exported + Failed + Dropped of
//     [Stats].
//   - Export errors go to otel.Handle and are counted, never retried (the
//     exporter's business, as with the SDK's processors); an exporter that
//     panics fails its batch, counted and logged at most once a minute.
//
// # Observability
//
// [SpanProcessor.Stats] and [LogProcessor.Stats]; with [WithMeterProvider]
// (or the global MeterProvider when OTEL_GO_X_OBSERVABILITY is "true"), the
// SDK's semantic-convention metrics otel.sdk.processor.span.processed
// (error.type [ErrorTypeQueueFull], [ErrorTypeExportFailed],
// [ErrorTypeShutdown]), .queue.size and .queue.capacity, and their log
// equivalents, observed from Stats at each collection (nothing is recorded
// on OnEnd or OnEmit); the sink's overload report goes through
// [WithLogger] or [WithOverloadReport].
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
// (OnEmit copies the record, as the SDK's processor does). Beside the
// SDK's processors a whole span costs about the same; under a burst that
// saturates the CPU otelsink exports more of the items and pays several
// times the SDK's CPU per item for it, where the SDK's processors drop
// (otelsink/README.md, "Measured against the SDK's batch processors").
package otelsink
