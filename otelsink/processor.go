package otelsink

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/shardedsink/shardedsink/sink"
)

// spanT is what the sink carries: the span as OnEnd received it.
type spanT = sdktrace.ReadOnlySpan

// cacheBlock is what a hot field is padded to: two 64-byte lines, because
// x86 prefetches lines in adjacent pairs.
const cacheBlock = 128

// SpanProcessor is an sdktrace.SpanProcessor that hands ended spans to a
// sharded sink and exports them from the sink's drain workers. See the
// package documentation for its guarantees and costs. Make one with [New] or
// [NewSpanProcessor]. It is safe for concurrent use and must not be copied.
type SpanProcessor struct {
	_ noCopy

	sink     *sink.Sink[spanT]
	exporter sdktrace.SpanExporter
	cfg      settings

	// closed is loaded by every OnEnd and stored once, by Shutdown. It sits
	// on its own cache lines so that the drain workers' counter updates
	// below do not invalidate the line every producer reads.
	_      [cacheBlock]byte
	closed uint32
	_      [cacheBlock - 4]byte

	// The drain side. exportMu serialises ExportSpans: the SDK promises
	// exporters that it never calls them concurrently, and the sink has one
	// drain worker per shard.
	exportMu     sync.Mutex
	exporterDown bool // under exportMu and acctMu: set before exporter.Shutdown

	// acctMu guards the settling of the counts: an export's result is
	// counted under it unless Shutdown, whose ctx ended while the export
	// ran, has settled them (settled), counting the batch in the exporter's
	// hands (inExport) as failed. Only drain workers and Shutdown take it.
	acctMu   sync.Mutex
	settled  bool
	inExport uint64

	// Counters, updated with atomic adds off the producers' path (closedDrops
	// only by an OnEnd after Shutdown). exported and failed are added under
	// acctMu.
	exported     uint64 // spans in ExportSpans calls that returned nil
	failed       uint64 // spans in ExportSpans calls that failed
	exportErrors uint64 // ExportSpans calls that failed
	closedDrops  uint64 // OnEnd after Shutdown
	lastErr      atomic.Pointer[error]
	// errorsReported is the exportErrors count that ForceFlush last
	// reported up to.
	errorsReported uint64

	// Exporter panics and Goexits, and their rate-limited report.
	exporterPanics  uint64
	faultsReported  uint64
	lastFaultReport int64 // unix ns of the last report; 0 before the first

	// drained is set once the rings are no longer drained for export: the
	// sink's workers have exited, or Shutdown settled the counts. From then
	// on every span accepted into the sink and neither exported nor failed
	// counts as dropped.
	drained uint32

	shutdownOnce sync.Once
	shutdownDone chan struct{} // closed once shutdownErr is set
	shutdownErr  error

	reg metric.Registration // nil without WithMeterProvider
}

var _ sdktrace.SpanProcessor = (*SpanProcessor)(nil)

// processorID numbers the processors of this process for their default
// names.
var processorID atomic.Int64

// New returns a SpanProcessor that exports through exporter, with its drain
// workers started. It returns an error wrapping [ErrInvalidOption] that names
// every bad option and its value (and a nil exporter or option), and then
// starts nothing. The processor runs until Shutdown (the TracerProvider's
// Shutdown calls it); one that is dropped without Shutdown keeps its
// goroutines.
func New(exporter sdktrace.SpanExporter, opts ...Option) (*SpanProcessor, error) {
	var c config
	var errs []error
	if exporter == nil {
		errs = append(errs, fmt.Errorf("%w: exporter = nil: a SpanProcessor needs an exporter", ErrInvalidOption))
	}
	for i, o := range opts {
		if o == nil {
			errs = append(errs, fmt.Errorf("%w: option %d is nil", ErrInvalidOption, i))
			continue
		}
		o(&c)
	}
	st, err := c.settle(processorID.Add(1) - 1)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	p := &SpanProcessor{
		exporter:     exporter,
		cfg:          st,
		shutdownDone: make(chan struct{}),
	}
	p.sink, err = sink.New(st.sink, exportAction{p})
	if err != nil {
		// settle checks every bound that sink.New checks; should the sink
		// refuse anything else, it is still an option's fault.
		return nil, fmt.Errorf("%w: %w", ErrInvalidOption, err)
	}
	if st.meterProvider != nil {
		if err := p.registerMetrics(st.meterProvider); err != nil {
			_ = p.sink.Shutdown(context.Background()) // empty: nothing was pushed yet
			return nil, err
		}
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
// goroutine's home shard (sink.Sink.Push: one try-push, and one more on the
// next shard when that ring is full); when both rings are full, or after
// Shutdown, s is dropped and counted in [SpanProcessor.Dropped].
//
// A successful OnEnd writes to no shared counter: it loads the closed flag
// (a line that only Shutdown writes), the sampled flag, and does the push.
func (p *SpanProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	// Shutdown stores closed before it shuts the sink down. An OnEnd that
	// loads 0 here and pushes while the sink's final drain runs is either
	// drained by it or left in a ring, where Dropped counts it once the
	// sink's Shutdown has returned.
	if atomic.LoadUint32(&p.closed) != 0 {
		atomic.AddUint64(&p.closedDrops, 1)
		return
	}
	p.sink.Push(s)
}

// ForceFlush returns once every span ended (OnEnd returned) before the call
// has been handed to the exporter and that ExportSpans call has returned. It
// returns ctx.Err() when ctx ends first (the spans stay queued and are
// exported later), and an error wrapping the last export error when
// ExportSpans calls failed since the previous ForceFlush reported (each
// failure is reported by one ForceFlush; all are counted in Stats). After
// Shutdown began it does nothing and returns nil, whatever ctx, as the SDK's
// contract asks; when Shutdown begins while it waits, it returns the result
// of Shutdown's drain. Called with the ctx of an ExportSpans call, it returns
// an error wrapping sink.ErrCalledFromDrain at once.
//
// It wakes the drain workers and waits by polling with a backoff from 20 µs
// to 1 ms (sink.Sink.Flush); it does not block OnEnd.
func (p *SpanProcessor) ForceFlush(ctx context.Context) error {
	if atomic.LoadUint32(&p.closed) != 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	err := p.sink.Flush(ctx)
	if errors.Is(err, sink.ErrShutdown) {
		// Shutdown stopped the workers while we waited. Its drain exports
		// what this flush waited for; the sink's Shutdown returns its result
		// (the first call's, waiting for it when it is still running).
		err = p.sink.Shutdown(ctx)
	}
	if err != nil {
		return err
	}
	// Report the failures since the previous report, each to one caller:
	// the compare-and-swap keeps two concurrent ForceFlush calls from
	// reporting one failure twice or moving the mark back.
	now := atomic.LoadUint64(&p.exportErrors)
	for {
		prev := atomic.LoadUint64(&p.errorsReported)
		if now <= prev {
			return nil
		}
		if atomic.CompareAndSwapUint64(&p.errorsReported, prev, now) {
			return fmt.Errorf("otelsink: %d export(s) failed since the previous ForceFlush, the last one: %w",
				now-prev, *p.lastErr.Load())
		}
	}
}

// Shutdown stops the processor: from its start every OnEnd drops its span
// (counted); it drains what the rings hold through the exporter, stops the
// drain workers, waits for an ExportSpans call in progress to return, and
// then calls the exporter's Shutdown with ctx. It returns nil when all of
// that succeeded, the exporter's Shutdown error otherwise (joined with that
// of unregistering the metric callbacks), and ctx.Err() when ctx ended
// first.
//
// When ctx ends first, Shutdown returns at once, even when the exporter
// ignores the ctx of the export in progress (whose ctx is cancelled), and
// the counts are final when it returns: the batch in the exporter's hands
// counts as failed, and every other span not yet exported (in the rings, or
// taken by a worker that has not called the exporter) as dropped. An export
// that returns later changes no count, and no export starts any more. The
// exporter's Shutdown is then called, with the same ended ctx, on another
// goroutine once the export in progress has returned (its error goes to
// otel.Handle), so that no ExportSpans call overlaps or follows it: as with
// the BatchSpanProcessor, an exporter that never returns keeps that
// goroutine. (One transient exception to "final": a drain worker that was
// in the middle of taking a batch from a ring when ctx ended makes the
// sink's counters, and so Dropped, off by that batch until the take ends,
// microseconds later.)
//
// It is idempotent: the first call does the work and every call returns its
// result; a call made while the first runs waits for it, or returns its own
// ctx.Err() when its ctx ends first. Called with the ctx of one of this
// processor's ExportSpans calls (or a ctx derived from it) it returns an
// error wrapping sink.ErrCalledFromDrain at once and does nothing, since it
// would wait for that very call: the processor keeps running, and a later
// Shutdown does the work. Called from inside ExportSpans with an unrelated
// ctx it cannot tell, and returns when that ctx ends.
func (p *SpanProcessor) Shutdown(ctx context.Context) error {
	if p.calledFromExport(ctx) {
		return fmt.Errorf("otelsink: Shutdown called with the ctx of an ExportSpans call: it would wait for that call; the processor keeps running: %w",
			sink.ErrCalledFromDrain)
	}
	first := false
	p.shutdownOnce.Do(func() { first = true })
	if !first {
		select {
		case <-p.shutdownDone:
			return p.shutdownErr
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p.shutdownErr = p.shutdown(ctx)
	close(p.shutdownDone)
	return p.shutdownErr
}

func (p *SpanProcessor) shutdown(ctx context.Context) error {
	atomic.StoreUint32(&p.closed, 1)
	sinkErr := p.sink.Shutdown(ctx)
	var regErr error
	if p.reg != nil {
		regErr = p.reg.Unregister()
	}
	done := sinkErr == nil // the sink returns nil only once its workers have exited
	if !done {
		select {
		case <-p.sink.Done():
			done = true
		case <-ctx.Done():
			select { // both may be ready: prefer the complete result
			case <-p.sink.Done():
				done = true
			default:
			}
		}
	}
	if !done {
		p.settle(ctx)
		go func() {
			<-p.sink.Done()
			if err := p.shutdownExporter(ctx); err != nil {
				otel.Handle(err)
			}
		}()
		if sinkErr == nil {
			sinkErr = ctx.Err()
		}
		return join(sinkErr, regErr)
	}
	<-p.sink.Done()
	atomic.StoreUint32(&p.drained, 1)
	return join(sinkErr, p.shutdownExporter(ctx), regErr)
}

// settle makes the counts final after Shutdown's ctx ended with an export
// possibly in progress: that export's batch counts as failed, and from now
// on Stats counts every span accepted into the sink and not exported or
// failed as dropped.
func (p *SpanProcessor) settle(ctx context.Context) {
	p.acctMu.Lock()
	defer p.acctMu.Unlock()
	p.settled = true
	if n := p.inExport; n > 0 {
		err := fmt.Errorf("otelsink: export of %d spans still running when Shutdown's ctx ended: %w", n, context.Cause(ctx))
		p.lastErr.Store(&err)
		atomic.AddUint64(&p.failed, n)
		atomic.AddUint64(&p.exportErrors, 1)
	}
	atomic.StoreUint32(&p.drained, 1)
}

// shutdownExporter marks the exporter as shut down (no export starts after
// this) and calls its Shutdown. No drain worker runs any more.
func (p *SpanProcessor) shutdownExporter(ctx context.Context) error {
	p.exportMu.Lock()
	p.acctMu.Lock()
	p.exporterDown = true
	p.acctMu.Unlock()
	p.exportMu.Unlock()
	return p.exporter.Shutdown(ctx)
}

// join is errors.Join, except that a single error is returned as it is, so
// that a ctx error stays comparable with ==.
func join(errs ...error) error {
	var only error
	n := 0
	for _, err := range errs {
		if err != nil {
			only = err
			n++
		}
	}
	if n <= 1 {
		return only
	}
	return errors.Join(errs...)
}

// Dropped returns the number of sampled spans ended and never handed to the
// exporter: those that found their rings full, those ended after Shutdown
// began and not drained by it, those a Shutdown whose ctx ended left in the
// rings or in a drain worker's hands, and those of a batch lost to a fault
// of the processor's own export path. Once Shutdown has returned (with or
// without an error) and no OnEnd is running, every sampled span ended is
// counted exactly once in Exported, Failed or Dropped of
// [SpanProcessor.Stats] (see Shutdown for the one transient exception).
func (p *SpanProcessor) Dropped() uint64 {
	return p.Stats().Dropped
}

// Stats is a snapshot of a processor's counters, from [SpanProcessor.Stats].
type Stats struct {
	Name         string `json:"name"`
	Exported     uint64 `json:"exported"`      // spans in ExportSpans calls that returned nil
	Failed       uint64 `json:"failed"`        // spans in ExportSpans calls that returned an error, panicked, called runtime.Goexit, or were still running when Shutdown's ctx ended
	ExportErrors uint64 `json:"export_errors"` // ExportSpans calls that failed so
	// ExporterPanics counts the ExportSpans calls that panicked or called
	// runtime.Goexit (each is also in ExportErrors). They are reported
	// through the logger ([WithLogger]) at most once a minute, with the
	// stack of a panic, and not handed to otel.Handle.
	ExporterPanics uint64     `json:"exporter_panics"`
	Dropped        uint64     `json:"dropped"`  // see SpanProcessor.Dropped
	Queued         int        `json:"queued"`   // spans waiting in the rings; 0 after Shutdown, when they count as Dropped
	Capacity       int        `json:"capacity"` // QueueCapacity
	Sink           sink.Stats `json:"sink"`     // the sink's own view: drops at push, per shard
}

// Stats returns a snapshot of the counters. Each is read once; under
// concurrency they are read one after another, not at one instant. It
// allocates (the sink's per-shard slice).
//
// Once Shutdown has finished draining (or settled the counts when its ctx
// ended), Dropped is computed rather than counted: the spans the sink
// accepted (Sink.Queued + Sink.Drained) less those exported or failed, plus
// the drops at push and after Shutdown. The exported and failed counts no
// longer change then.
func (p *SpanProcessor) Stats() Stats {
	drained := atomic.LoadUint32(&p.drained) != 0
	st := Stats{
		Name:           p.cfg.name,
		Exported:       atomic.LoadUint64(&p.exported),
		Failed:         atomic.LoadUint64(&p.failed),
		ExportErrors:   atomic.LoadUint64(&p.exportErrors),
		ExporterPanics: atomic.LoadUint64(&p.exporterPanics),
		Capacity:       p.QueueCapacity(),
	}
	ss := p.sink.Stats()
	st.Sink = ss
	st.Dropped = ss.Dropped + atomic.LoadUint64(&p.closedDrops)
	st.Queued = ss.Queued
	if drained {
		// exported and failed were final before drained was stored.
		accepted := uint64(ss.Queued) + ss.Drained
		if done := st.Exported + st.Failed; accepted > done {
			st.Dropped += accepted - done
		}
		st.Queued = 0
	}
	return st
}

// QueueCapacity returns the number of spans the rings hold in all: the
// per-shard capacity times the shard count. At most this many spans, plus
// one export batch per shard in the drain workers' hands, are buffered.
func (p *SpanProcessor) QueueCapacity() int { return p.cfg.perShard * p.cfg.shards }

// Name returns the processor's name (see [WithName]).
func (p *SpanProcessor) Name() string { return p.cfg.name }

// noCopy lets go vet's copylocks check flag copies of a SpanProcessor.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
