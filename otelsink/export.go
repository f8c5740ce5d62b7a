package otelsink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync/atomic"
	"time"

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

// exportCtxKey marks the ctx given to ExportSpans, so that Shutdown called
// with it (or a ctx derived from it) can return at once.
type exportCtxKey struct{}

// calledFromExport reports whether ctx is, or derives from, the ctx of one of
// this processor's ExportSpans calls.
func (p *SpanProcessor) calledFromExport(ctx context.Context) bool {
	q, _ := ctx.Value(exportCtxKey{}).(*SpanProcessor)
	return q == p
}

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

// outcome is how an ExportSpans call ended.
type outcome struct {
	err    error
	fault  string // "" when ExportSpans returned; else what it did instead, for the report
	stack  []byte // of a panic
	goexit bool
}

// exportLocked calls the exporter unless it is shut down or Shutdown has
// settled the counts, and counts the result. Its deferred call counts the
// batch however the exporter leaves: by returning, by panicking (recovered
// in callExporter), or by runtime.Goexit, which ends this goroutine after
// the deferred calls (the sink then starts the shard's worker anew).
func (p *SpanProcessor) exportLocked(ctx context.Context, batch []spanT) (handle error) {
	n := uint64(len(batch))
	p.exportMu.Lock()
	defer p.exportMu.Unlock()
	if !p.begin(n) {
		return nil
	}
	res := outcome{goexit: true, fault: "called runtime.Goexit"}
	defer func() { handle = p.end(n, res) }()
	res = p.callExporter(ctx, batch)
	return nil // replaced by the deferred call
}

// begin records that a batch of n spans is handed to the exporter, and
// reports false when it must not be: the exporter is shut down, or Shutdown
// has settled the counts after its ctx ended. Such a batch is counted as
// dropped by Stats (it was taken from a ring and neither exported nor
// failed). exportMu is held.
func (p *SpanProcessor) begin(n uint64) bool {
	p.acctMu.Lock()
	defer p.acctMu.Unlock()
	if p.settled || p.exporterDown {
		return false
	}
	p.inExport = n
	return true
}

// end counts the outcome of an export of n spans, unless Shutdown settled the
// counts while it ran (then Shutdown counted the batch as failed, and the
// late outcome changes no count). It returns the error to hand to
// otel.Handle: that of an export that returned an error. A panic or Goexit
// is counted in Stats().ExporterPanics and reported through the logger at
// most once a minute instead.
func (p *SpanProcessor) end(n uint64, res outcome) error {
	var err error
	switch {
	case res.fault != "":
		err = fmt.Errorf("otelsink: export of %d spans: exporter %T %s", n, p.exporter, res.fault)
	case res.err != nil:
		err = fmt.Errorf("otelsink: export of %d spans: %w", n, res.err)
	}
	p.acctMu.Lock()
	p.inExport = 0
	if !p.settled {
		if err == nil {
			atomic.AddUint64(&p.exported, n)
		} else {
			p.lastErr.Store(&err) // before the count: ForceFlush loads it after it sees the count rise
			atomic.AddUint64(&p.failed, n)
			atomic.AddUint64(&p.exportErrors, 1)
		}
	}
	p.acctMu.Unlock()
	if res.fault != "" {
		p.reportFault(err, res)
		return nil
	}
	return err
}

// callExporter calls ExportSpans with the export timeout, and turns a panic
// in it into an outcome. A Goexit passes through.
func (p *SpanProcessor) callExporter(ctx context.Context, batch []spanT) (res outcome) {
	ctx = context.WithValue(ctx, exportCtxKey{}, p)
	if t := p.cfg.exportTimeout; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, t, ErrExportTimeout)
		defer cancel()
	}
	returned := false
	defer func() {
		if returned {
			return
		}
		if r := recover(); r != nil {
			res = outcome{fault: fmt.Sprintf("panicked: %v", r), stack: debug.Stack()}
		}
		// r == nil: runtime.Goexit; res keeps the zero value and the caller's
		// deferred call counts it.
	}()
	err := p.exporter.ExportSpans(ctx, batch)
	returned = true
	return outcome{err: err}
}

// faultReportEvery is the least time between two reports of exporter panics
// (and Goexits) through the logger.
const faultReportEvery = time.Minute

// reportFault counts a panic or Goexit of the exporter and logs it, at most
// once every faultReportEvery (the report says how many it stands for).
func (p *SpanProcessor) reportFault(err error, res outcome) {
	total := atomic.AddUint64(&p.exporterPanics, 1)
	now := time.Now().UnixNano()
	last := atomic.LoadInt64(&p.lastFaultReport)
	if last != 0 && now-last < int64(faultReportEvery) {
		return
	}
	if !atomic.CompareAndSwapInt64(&p.lastFaultReport, last, now) {
		return // another worker reports
	}
	since := total - atomic.SwapUint64(&p.faultsReported, total)
	args := []any{"processor", p.cfg.name, "error", err.Error(), "faults_since_last_report", since, "faults_total", total}
	if res.stack != nil {
		args = append(args, "stack", string(res.stack))
	}
	logger := p.cfg.logger
	if logger == nil {
		logger = slog.Default()
	}
	logger.Error("otelsink: the exporter panicked or called runtime.Goexit; its batch failed (reported at most once a minute)", args...)
}
