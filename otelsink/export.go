package otelsink

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// outcome is how an export call ended.
type outcome struct {
	err   error
	fault string // "" when the exporter returned; else what it did instead, for the report
	stack []byte // of a panic
}

// export calls the exporter with batch, exportMu held: with ctx (ended only
// when the ctx given to Shutdown ends first, or, from ForceFlush, ForceFlush's)
// bounded by the export timeout, unless the exporter is shut down or
// Shutdown has settled the counts, and counts the result before it returns,
// so that ForceFlush sees it. It returns a failure for otel.Handle (the
// caller hands it over once exportMu is released, so that a slow handler
// delays no export); the items of a failed export are not retried (as in
// the SDK's batch processors: retrying is the exporter's business).
//
// Its deferred call counts the batch however the exporter leaves: by
// returning, by panicking (recovered in callExporter), or by runtime.Goexit,
// which ends the calling goroutine after the deferred calls (on a drain
// worker, the sink then starts the shard's worker anew).
func (c *core[T]) export(ctx context.Context, batch []T) (handle error) {
	n := uint64(len(batch))
	if !c.begin(n) {
		return nil
	}
	res := outcome{fault: "called runtime.Goexit"}
	defer func() { handle = c.end(n, res) }()
	res = c.callExporter(ctx, batch)
	return nil // replaced by the deferred call
}

// begin records that a batch of n items is handed to the exporter, and
// reports false when it must not be: the exporter is shut down, or Shutdown
// has settled the counts after its ctx ended. Such a batch is counted as
// dropped by Stats (it was taken from a ring and neither exported nor
// failed). exportMu is held.
func (c *core[T]) begin(n uint64) bool {
	c.acctMu.Lock()
	defer c.acctMu.Unlock()
	if c.settled || c.exporterDown {
		return false
	}
	c.inExport = n
	return true
}

// end counts the outcome of an export of n items, unless Shutdown settled
// the counts while it ran (then Shutdown counted the batch as failed, and
// the late outcome changes no count). It returns the error to hand to
// otel.Handle: that of an export that returned an error. A panic or Goexit
// is counted in Stats().ExporterPanics and reported through the logger at
// most once a minute instead.
func (c *core[T]) end(n uint64, res outcome) error {
	var err error
	switch {
	case res.fault != "":
		err = fmt.Errorf("otelsink: export of %d %s: exporter %s %s", n, c.unit, c.exp.name(), res.fault)
	case res.err != nil:
		err = fmt.Errorf("otelsink: export of %d %s: %w", n, c.unit, res.err)
	}
	c.acctMu.Lock()
	c.inExport = 0
	if !c.settled {
		if err == nil {
			atomic.AddUint64(&c.exported, n)
		} else {
			c.lastErr.Store(&err) // before the count: ForceFlush loads it after it sees the count rise
			atomic.AddUint64(&c.failed, n)
			atomic.AddUint64(&c.exportErrors, 1)
		}
	}
	c.acctMu.Unlock()
	if res.fault != "" {
		c.reportFault(err, res)
		return nil
	}
	return err
}

// callExporter calls the exporter with the export timeout, and turns a panic
// in it into an outcome. A Goexit passes through.
func (c *core[T]) callExporter(ctx context.Context, batch []T) (res outcome) {
	ctx = context.WithValue(ctx, exportCtxKey{}, c)
	if t := c.cfg.exportTimeout; t > 0 {
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
		// r == nil: runtime.Goexit; the caller's deferred call counts it.
	}()
	err := c.exp.export(ctx, batch)
	returned = true
	return outcome{err: err}
}

// faultReportEvery is the least time between two reports of exporter panics
// (and Goexits) through the logger.
const faultReportEvery = time.Minute

// reportFault counts a panic or Goexit of the exporter and logs it, at most
// once every faultReportEvery (the report says how many it stands for).
func (c *core[T]) reportFault(err error, res outcome) {
	total := atomic.AddUint64(&c.exporterPanics, 1)
	now := time.Now().UnixNano()
	last := atomic.LoadInt64(&c.lastFaultReport)
	if last != 0 && now-last < int64(faultReportEvery) {
		return
	}
	if !atomic.CompareAndSwapInt64(&c.lastFaultReport, last, now) {
		return // another worker reports
	}
	since := total - atomic.SwapUint64(&c.faultsReported, total)
	args := []any{"processor", c.cfg.name, "error", err.Error(), "faults_since_last_report", since, "faults_total", total}
	if res.stack != nil {
		args = append(args, "stack", string(res.stack))
	}
	logger := c.cfg.logger
	if logger == nil {
		logger = slog.Default()
	}
	logger.Error("otelsink: the exporter panicked or called runtime.Goexit; its batch failed (reported at most once a minute)", args...)
}
