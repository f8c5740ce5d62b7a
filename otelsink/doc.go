// Package otelsink is an OpenTelemetry span processor built on the sharded
// sink of [github.com/shardedsink/shardedsink/sink]: a replacement for
// sdktrace.NewBatchSpanProcessor whose OnEnd never waits, never takes a
// lock, and spreads the spans of many goroutines over several rings instead
// of one channel.
//
//	exporter, _ := otlptracegrpc.New(ctx)
//	tp := sdktrace.NewTracerProvider(
//		sdktrace.WithSpanProcessor(otelsink.NewSpanProcessor(exporter)))
//	defer tp.Shutdown(ctx) // drains, stops the workers, shuts the exporter down
//
// # Model
//
// [SpanProcessor.OnEnd] ignores unsampled spans, and pushes a sampled one
// into a sink.Sink without a handle (sink.Sink.Push): into the ring of the
// calling goroutine's home shard (the sink hashes the goroutine's stack
// address), or the next shard's when that ring is full. When
// both are full the span is dropped and counted, and OnEnd returns; it never
// blocks (there is no equivalent of the BatchSpanProcessor's WithBlocking).
// One drain worker per shard takes up to [WithMaxExportBatchSize] spans at a
// time (its own ring first, then a few stolen from the others) and calls the
// exporter's ExportSpans. The calls are serialised by a mutex, because the
// SDK promises exporters that ExportSpans is never called concurrently: more
// shards make OnEnd cheaper under contention, not the exporter faster.
//
// Differences from the BatchSpanProcessor, where the options mean the same:
//
//   - [WithMaxQueueSize] is the total over the shards (default
//     [DefaultQueuePerShard] (512) per shard; with the sink's default of
//     4 shards per P, 2,048 spans, the BatchSpanProcessor's queue, per P).
//   - There is no batch timeout: a worker exports whatever its shard holds as
//     soon as it finds it, so under light load batches are short and there
//     are more ExportSpans calls (with a network exporter, more requests)
//     than with the BatchSpanProcessor's 5-second schedule.
//   - Spans are exported in the order they were ended only within one ring:
//     spans ended on different Ps may be exported in any order.
//   - A nil exporter is an error (the BatchSpanProcessor accepts it and does
//     nothing).
//
// # Guarantees
//
//   - Unsampled spans never enter the sink and are never exported or counted.
//   - [SpanProcessor.ForceFlush] returns once every span whose OnEnd
//     returned before the call has been handed to ExportSpans and that call
//     has returned: nil, or an error wrapping the last export error when
//     exports failed since the previous ForceFlush; ctx.Err() when ctx ends
//     first. After Shutdown it does nothing, as the SDK's contract asks.
//   - [SpanProcessor.Shutdown] stops accepting spans (an OnEnd that starts
//     after it drops and counts its span), exports what the rings hold, stops
//     the workers, waits for an export in progress, then calls the
//     exporter's Shutdown. It is idempotent, and no ExportSpans call starts
//     after the exporter's Shutdown.
//   - Shutdown returns when its ctx ends, even when the exporter ignores the
//     ctx of the export in progress: the batch in the exporter's hands then
//     counts as failed, the spans not yet exported as dropped, the
//     exporter's late return changes no count, and the exporter's Shutdown
//     is called once that export has returned, on another goroutine.
//   - Called with the ctx of an ExportSpans call, Shutdown returns an error
//     wrapping sink.ErrCalledFromDrain at once and the processor keeps
//     running; ForceFlush does the same through the sink.
//   - Every sampled span is accounted for: once Shutdown has returned and no
//     OnEnd is running, the sampled spans ended equal Exported + Failed +
//     Dropped of [SpanProcessor.Stats]. After a Shutdown whose ctx ended
//     while a drain worker was taking a batch from a ring, the sink's
//     counters (and so Dropped) can be off by that batch for the
//     microseconds the take lasts.
//   - Export errors go to otel.Handle, are counted in Stats, and are not
//     retried: retrying is the exporter's business, as with the
//     BatchSpanProcessor. An exporter that panics or calls runtime.Goexit
//     fails its batch: counted in Stats (ExporterPanics too) and reported
//     through the logger at most once a minute.
//
// # Observability
//
// [SpanProcessor.Dropped] and [SpanProcessor.Stats]; with [WithMeterProvider],
// the Int64ObservableCounter [DroppedMetric]; and the sink's overload report
// (an Error log record through [WithLogger]'s logger at most every 5 s while
// spans are being dropped, or your function with [WithOverloadReport]).
//
// # Errors
//
// [New] returns an error wrapping [ErrInvalidOption] that names every bad
// option and its value (WithMaxQueueSize(0), WithShards(-1), a queue below
// the shard count, a nil exporter, ...). [NewSpanProcessor], whose shape is
// that of sdktrace.NewBatchSpanProcessor, panics with that error instead.
//
// # Costs
//
// Measured side by side with the BatchSpanProcessor on a shared 2-core VM
// (the README has the tables, the load averages and the commands; cd
// otelsink && go test -run '^$' -bench Threads -benchtime=10000x -count=10 .):
//
//   - OnEnd costs 26 to 31 ns of CPU per span from 1 to 256 goroutines and
//     allocates nothing; the BatchSpanProcessor's 21 to 47 ns. At 64
//     goroutines that is 0.65 times the BSP's in the latest run, 0.83 and
//     1.26 times in two earlier ones: not the half that was the goal. Two
//     Ps never contend much for the BSP's one channel.
//   - A whole span (Start and End through a TracerProvider) costs 0.9 to
//     1.3 µs of CPU with either processor; a CPU profile puts OnEnd at a
//     few percent of it. The SDK's span creation dominates.
//   - Under a burst that saturates the CPU, this processor exports a smaller
//     share than the BatchSpanProcessor (2.5 % against 9.3 % at 64
//     goroutines ending stubs as fast as they can): its drain workers yield
//     after every batch and wait their turn among the runnable producers,
//     while the BatchSpanProcessor's one goroutine drains as long as its
//     channel holds spans. Every span is still exported or counted.
package otelsink
