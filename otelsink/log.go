package otelsink

import (
	"context"
	"errors"
	"fmt"

	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/shardedsink/shardedsink/internal/layout"
)

// LogProcessor is an sdklog.Processor that hands emitted log records to a
// sharded sink and exports them from the sink's drain workers: a
// replacement for sdklog.NewBatchProcessor whose OnEmit never waits and
// takes no lock. It has the guarantees of [SpanProcessor], with records in
// place of spans. Make one with [NewLog] or [NewLogProcessor]. It is safe
// for concurrent use and must not be copied.
type LogProcessor struct {
	_ layout.NoCopy
	c core[sdklog.Record]
}

var _ sdklog.Processor = (*LogProcessor)(nil)

// logExporter adapts an sdklog.Exporter to the core.
type logExporter struct{ e sdklog.Exporter }

func (l logExporter) export(ctx context.Context, b []sdklog.Record) error { return l.e.Export(ctx, b) }
func (l logExporter) forceFlush(ctx context.Context) error                { return l.e.ForceFlush(ctx) }
func (logExporter) flushes() bool                                         { return true }
func (l logExporter) shutdown(ctx context.Context) error                  { return l.e.Shutdown(ctx) }
func (l logExporter) name() string                                        { return fmt.Sprintf("%T", l.e) }

// logKind is the log processor's part of the settings.
var logKind = kind{
	perShard:      DefaultLogQueuePerShard,
	shardsPerP:    DefaultLogShardsPerP,
	maxShards:     DefaultLogMaxShards,
	namePrefix:    "otelsink_log",
	batchTimeout:  DefaultLogBatchTimeout,
	envQueue:      EnvBLRPMaxQueueSize,
	envBatch:      EnvBLRPMaxExportBatchSize,
	envTimeout:    EnvBLRPExportTimeout,
	envDelay:      EnvBLRPScheduleDelay,
	componentType: "batching_log_processor",
	metrics:       logMetrics,
}

// NewLog returns a LogProcessor that exports through exporter, with its
// drain workers started. It takes the options of [New], which mean the same,
// and reads the OTEL_BLRP_* environment variables for those not given. It
// returns an error wrapping [ErrInvalidOption] that names every bad option
// and its value (and a nil exporter or option), and then starts nothing.
// The processor runs until Shutdown (the LoggerProvider's Shutdown calls
// it).
func NewLog(exporter sdklog.Exporter, opts ...LogOption) (*LogProcessor, error) {
	var errs []error
	if exporter == nil {
		errs = append(errs, fmt.Errorf("%w: exporter = nil: a LogProcessor needs an exporter", ErrInvalidOption))
	}
	st, err := configure(logKind, opts)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	p := &LogProcessor{}
	if err := p.c.init(logExporter{exporter}, st, "records"); err != nil {
		return nil, err
	}
	if err := p.c.registerMetrics(logKind); err != nil {
		p.c.release()
		return nil, err
	}
	return p, nil
}

// NewLogProcessor is [NewLog] for the shape of sdklog.NewBatchProcessor: it
// panics with NewLog's error (which names the bad option and its value)
// instead of returning it.
func NewLogProcessor(exporter sdklog.Exporter, opts ...LogOption) *LogProcessor {
	p, err := NewLog(exporter, opts...)
	if err != nil {
		panic(err)
	}
	return p
}

// Enabled returns true, as the log BatchProcessor's does.
func (*LogProcessor) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }

// OnEmit hands a copy of record to the sink without waiting, and returns
// nil. The SDK reuses the record after OnEmit returns and it is not safe
// for concurrent use, so OnEmit takes record.Clone(), which shares no state
// with it (and allocates only when the record has more attributes than it
// holds inline). The copy is pushed into the calling goroutine's home shard
// (sink.Sink.Push: one try-push, and when that ring is full one more on
// the next shard, or on every other shard where the CPU owns a group of
// shards); when those rings are full, or after Shutdown, it is dropped and counted in
// Stats().Dropped. A nil record is ignored. ctx is not used: a cancelled
// ctx does not stop the record.
func (p *LogProcessor) OnEmit(_ context.Context, record *sdklog.Record) error {
	if record == nil {
		return nil
	}
	p.c.push(record.Clone())
	return nil
}

// ForceFlush returns once every record emitted (OnEmit returned) before the
// call has been handed to the exporter (in an export batch of any size) and
// that Export call has returned, and the exporter's ForceFlush has
// returned. It returns ctx.Err() when ctx
// ends first (also while the exporter's ForceFlush, ignoring ctx, still
// runs), and an error wrapping the last export error when Export calls
// failed since the previous ForceFlush reported, joined with the exporter's
// ForceFlush error. After Shutdown began it does nothing and returns nil.
// See [SpanProcessor.ForceFlush].
func (p *LogProcessor) ForceFlush(ctx context.Context) error { return p.c.forceFlush(ctx) }

// Shutdown stops the processor as [SpanProcessor.Shutdown] does: it drains
// the rings through the exporter, waits for an Export call in progress,
// then calls the exporter's ForceFlush (while ctx is live) and Shutdown. It
// honours ctx even when the exporter ignores it (the batch in flight then
// counts as failed, and the exporter is flushed and shut down later with a
// ctx of its own), and once it has returned, the records emitted equal
// Exported + Failed + Dropped of Stats. Later calls do nothing and return
// nil, as sdklog.Processor's contract asks.
func (p *LogProcessor) Shutdown(ctx context.Context) error { return p.c.shutdownCalled(ctx) }

// Stats returns a snapshot of the counters; see [SpanProcessor.Stats].
func (p *LogProcessor) Stats() Stats { return p.c.stats() }

// QueueCapacity returns the number of records the rings hold in all.
func (p *LogProcessor) QueueCapacity() int { return p.c.queueCapacity() }

// Name returns the processor's name (see [WithName]).
func (p *LogProcessor) Name() string { return p.c.cfg.name }
