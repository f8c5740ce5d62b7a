package otelsink

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/shardedsink/shardedsink/internal/layout"
)

// spanT is what the sink carries: the span as OnEnd received it.
type spanT = sdktrace.ReadOnlySpan

// ErrExportTimeout is the cause (context.Cause) of the ctx of an export call
// that ran past the export timeout ([WithExportTimeout]); ctx.Err() is then
// context.DeadlineExceeded.
var ErrExportTimeout = errors.New("otelsink: export timeout")

// SpanProcessor is an sdktrace.SpanProcessor that hands ended spans to a
// sharded sink and exports them from the sink's drain workers. See the
// package documentation for its guarantees and costs. Make one with [New] or
// [NewSpanProcessor]. It is safe for concurrent use and must not be copied.
type SpanProcessor struct {
	_ layout.NoCopy
	c core[spanT]
}

var _ sdktrace.SpanProcessor = (*SpanProcessor)(nil)

// spanExporter adapts an sdktrace.SpanExporter to the core.
type spanExporter struct{ e sdktrace.SpanExporter }

func (s spanExporter) export(ctx context.Context, b []spanT) error { return s.e.ExportSpans(ctx, b) }
func (spanExporter) forceFlush(context.Context) error              { return nil }
func (spanExporter) flushes() bool                                 { return false }
func (s spanExporter) shutdown(ctx context.Context) error          { return s.e.Shutdown(ctx) }
func (s spanExporter) name() string                                { return fmt.Sprintf("%T", s.e) }

// processorID numbers the processors of this process for their default
// names.
var processorID atomic.Int64

// New returns a SpanProcessor that exports through exporter, with its drain
// workers started. It returns an error wrapping [ErrInvalidOption] that names
// every bad option and its value (and a nil exporter or option), and then
// starts nothing. Options not given are taken from the OTEL_BSP_*
// environment variables where set (see [WithMaxQueueSize] and the package
// documentation). The processor runs until Shutdown (the TracerProvider's
// Shutdown calls it); one that is dropped without Shutdown keeps its
// goroutines.
func New(exporter sdktrace.SpanExporter, opts ...Option) (*SpanProcessor, error) {
	var errs []error
	if exporter == nil {
		errs = append(errs, fmt.Errorf("%w: exporter = nil: a SpanProcessor needs an exporter", ErrInvalidOption))
	}
	st, err := configure(spanKind, opts)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	p := &SpanProcessor{}
	if err := p.c.init(spanExporter{exporter}, st, "spans"); err != nil {
		return nil, err
	}
	if err := p.c.registerMetrics(spanKind); err != nil {
		p.c.release()
		return nil, err
	}
	return p, nil
}

// NewSpanProcessor is [New] for the shape of sdktrace.NewBatchSpanProcessor:
// it panics with New's error (which names the bad option and its value)
// instead of returning it.
func NewSpanProcessor(exporter sdktrace.SpanExporter, opts ...Option) *SpanProcessor {
	p, err := New(exporter, opts...)
	if err != nil {
		panic(err)
	}
	return p
}

// OnStart does nothing.
func (*SpanProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd hands s to the sink without waiting. An unsampled span is ignored
// (neither queued nor counted). A sampled span is pushed into the calling
// goroutine's home shard (sink.Sink.Push: one try-push, and when that ring
// is full one more on the next shard, or, where the CPU owns a group of
// shards (CPU homes with more shards than CPUs, as with the default shard
// count), on every other shard, so that the whole queue takes a burst);
// when those rings are full, or after Shutdown, s is dropped and counted in
// [SpanProcessor.Dropped].
//
// A successful OnEnd writes to no shared counter: it loads the closed flag
// (a line that only Shutdown writes), the sampled flag, and does the push.
func (p *SpanProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	p.c.push(s)
}

// ForceFlush returns once every span ended (OnEnd returned) before the call
// has been handed to the exporter and that ExportSpans call has returned:
// it waits for the drain workers to hand those spans to the export batch,
// then exports the batch, whatever its size and the batch timeout. It
// returns ctx.Err() when ctx ends first (the spans stay queued and are
// exported later), and an error wrapping the last export error when
// ExportSpans calls failed since the previous ForceFlush reported (each
// failure is reported by one ForceFlush; all are counted in Stats). After
// Shutdown began it does nothing and returns nil, whatever ctx, as
// sdktrace.SpanProcessor's contract asks (the BatchSpanProcessor returns
// ctx.Err() for an ended ctx even then). When Shutdown begins while it
// waits, Shutdown's drain takes its spans over, and it returns once that
// Shutdown has: nil, or an error wrapping Shutdown's (its spans were
// dropped, or the exporter's Shutdown failed). Called with the ctx of an
// ExportSpans call, it returns an error wrapping sink.ErrCalledFromDrain at
// once.
//
// It wakes the drain workers and waits by polling with a backoff from 20 µs
// to 1 ms (sink.Sink.Flush); it does not block OnEnd.
func (p *SpanProcessor) ForceFlush(ctx context.Context) error { return p.c.forceFlush(ctx) }

// Shutdown stops the processor: from its start every OnEnd drops its span
// (counted); it drains what the rings hold through the exporter (and the
// export batch, whatever its size), stops the drain workers, waits for an
// ExportSpans call in progress to return, and then calls the exporter's
// Shutdown with ctx. It returns nil when all of that succeeded, the
// exporter's Shutdown error otherwise, and ctx.Err() itself whenever ctx
// ended before all of that was done, also while the exporter's Shutdown,
// ignoring ctx, still runs (its error then goes to otel.Handle).
//
// When ctx ends first, Shutdown returns at once, even when the exporter
// ignores the ctx of the export in progress (whose ctx is cancelled), and
// the counts are final when it returns: the batch in the exporter's hands
// counts as failed, and every other span not yet exported (in the rings, or
// taken by a worker that has not called the exporter) as dropped. An export
// that returns later changes no count, and no export starts any more. The
// exporter's Shutdown is then called on another goroutine once the export
// in progress has returned, so that no ExportSpans call overlaps or follows
// it, with a ctx of its own: ctx's values and the export timeout
// ([DefaultExportTimeout] when that is zero), not the ended ctx, so that
// the exporter can still flush and close its connections (the
// BatchSpanProcessor passes the ended ctx). Its error goes to otel.Handle
// and is counted in Stats().ExporterShutdownErrors. As with the
// BatchSpanProcessor, an export that never returns keeps that goroutine. (One transient exception to "final": a drain worker that was
// in the middle of taking a batch from a ring when ctx ended makes the
// sink's counters, and so Dropped, off by that batch until the take ends,
// microseconds later.)
//
// The first call does the work and returns its result; later calls do
// nothing and return nil, as the BatchSpanProcessor's do (one made while
// the first runs waits for it, or returns its own ctx.Err() when its ctx
// ends first). Called with the ctx of one of this
// processor's ExportSpans calls (or a ctx derived from it) it returns an
// error wrapping sink.ErrCalledFromDrain at once and does nothing, since it
// would wait for that very call: the processor keeps running, and a later
// Shutdown does the work. Called from inside ExportSpans with an unrelated
// ctx it cannot tell, and returns when that ctx ends.
func (p *SpanProcessor) Shutdown(ctx context.Context) error { return p.c.shutdownCalled(ctx) }

// Dropped returns the number of sampled spans ended and never handed to the
// exporter: those that found their rings full, those ended after Shutdown
// began and not drained by it, those a Shutdown whose ctx ended left in the
// rings or in a drain worker's hands, and those of a batch lost to a fault
// of the processor's own export path. Once Shutdown has returned (with or
// without an error) and no OnEnd is running, every sampled span ended is
// counted exactly once in Exported, Failed or Dropped of
// [SpanProcessor.Stats] (see Shutdown for the one transient exception).
func (p *SpanProcessor) Dropped() uint64 { return p.c.stats().Dropped }

// Stats returns a snapshot of the counters. Each is read once; under
// concurrency they are read one after another, not at one instant. It
// allocates (the sink's per-shard slice).
//
// Once Shutdown has finished draining (or settled the counts when its ctx
// ended), Dropped is computed rather than counted: the spans the sink
// accepted (Sink.Queued + Sink.Drained) less those exported or failed, plus
// the drops at push and after Shutdown. The exported and failed counts no
// longer change then.
func (p *SpanProcessor) Stats() Stats { return p.c.stats() }

// QueueCapacity returns the number of spans the rings hold in all: the
// per-shard capacity times the shard count. At most this many spans are
// buffered, plus what the drain workers hold (up to a shard's capacity
// each, handed over at once) and the export batch (fewer than
// WithMaxExportBatchSize), as the BatchSpanProcessor holds its batch on top
// of its queue.
func (p *SpanProcessor) QueueCapacity() int { return p.c.queueCapacity() }

// Name returns the processor's name (see [WithName]).
func (p *SpanProcessor) Name() string { return p.c.cfg.name }

// spanKind is the span processor's part of the settings.
var spanKind = kind{
	perShard:      DefaultQueuePerShard,
	shardsPerP:    DefaultShardsPerP,
	maxShards:     DefaultMaxShards,
	namePrefix:    "otelsink",
	batchTimeout:  DefaultBatchTimeout,
	envQueue:      EnvBSPMaxQueueSize,
	envBatch:      EnvBSPMaxExportBatchSize,
	envTimeout:    EnvBSPExportTimeout,
	envDelay:      EnvBSPScheduleDelay,
	zeroDuration:  true,
	componentType: "batching_span_processor",
	metrics:       spanMetrics,
}
