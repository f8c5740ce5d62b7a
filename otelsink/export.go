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
	if err := p.exportLocked(ctx, batch); err != nil {
		otel.Handle(err) // outside the mutex: a slow handler delays no export
	}
}

// exportLocked calls the exporter unless it is shut down, and counts the
// result while it holds exportMu: Shutdown takes the mutex after the sink's
// Shutdown, so it sees the counts of every export that ran before it.
func (p *SpanProcessor) exportLocked(ctx context.Context, batch []spanT) error {
	n := uint64(len(batch))
	p.exportMu.Lock()
	defer p.exportMu.Unlock()
	if p.exporterDown {
		atomic.AddUint64(&p.lateDrops, n)
		return nil
	}
	err := p.callExporter(ctx, batch)
	if err == nil {
		atomic.AddUint64(&p.exported, n)
		return nil
	}
	err = fmt.Errorf("otelsink: export of %d spans: %w", n, err)
	p.lastErr.Store(&err) // before the count: ForceFlush loads it after it sees the count rise
	atomic.AddUint64(&p.failed, n)
	atomic.AddUint64(&p.exportErrors, 1)
	return err
}

// callExporter calls ExportSpans with the export timeout, and turns a panic
// in it into an error.
func (p *SpanProcessor) callExporter(ctx context.Context, batch []spanT) (err error) {
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
