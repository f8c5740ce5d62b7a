package otelsink

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"go.opentelemetry.io/otel"
)

// ErrExportTimeout is the cause (context.Cause) of the ctx of an ExportSpans
// call that ran past the export timeout ([WithExportTimeout]); ctx.Err() is
// then context.DeadlineExceeded.
var ErrExportTimeout = errors.New("otelsink: export timeout")

// errExporterDown marks a batch that reached the exporter after its
// Shutdown.
var errExporterDown = errors.New("otelsink: exporter is shut down")

// exportAction is the sink's Action: it exports each batch.
type exportAction struct{ p *SpanProcessor }

// Drain exports batch; see SpanProcessor.export.
func (a exportAction) Drain(ctx context.Context, batch []spanT) { a.p.export(ctx, batch) }

// export runs on a drain worker. It calls ExportSpans under exportMu, with
// ctx (cancelled only when the ctx given to Shutdown ends first) bounded by
// the export timeout, and counts the result. A failure is counted and handed
// to otel.Handle; the spans of a failed export are not retried (as in the
// BatchSpanProcessor: retrying is the exporter's business). The counters
// are updated before Drain returns, so Flush (and ForceFlush) sees them.
func (p *SpanProcessor) export(ctx context.Context, batch []spanT) {
	n := uint64(len(batch))
	err := p.exportLocked(ctx, batch)
	switch {
	case err == nil:
		atomic.AddUint64(&p.exported, n)
	case errors.Is(err, errExporterDown):
		atomic.AddUint64(&p.lateDrops, n)
	default:
		err = fmt.Errorf("otelsink: export of %d spans: %w", n, err)
		p.lastErr.Store(&err) // before the count: ForceFlush loads it after it sees the count rise
		atomic.AddUint64(&p.failed, n)
		atomic.AddUint64(&p.exportErrors, 1)
		otel.Handle(err)
	}
}

// exportLocked calls the exporter unless it is shut down, and turns a panic
// in it into an error.
func (p *SpanProcessor) exportLocked(ctx context.Context, batch []spanT) (err error) {
	p.exportMu.Lock()
	defer p.exportMu.Unlock()
	if p.exporterDown {
		return errExporterDown
	}
	if t := p.cfg.exportTimeout; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, t, ErrExportTimeout)
		defer cancel()
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("exporter %T panicked: %v", p.exporter, r)
		}
	}()
	return p.exporter.ExportSpans(ctx, batch)
}
