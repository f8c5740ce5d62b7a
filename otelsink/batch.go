package otelsink

import (
	"context"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/shardedsink/shardedsink/internal/sinkhook"
)

// The export batch. The drain workers take items from their rings (each up
// to a shard's capacity at a time) and append them to one batch, under
// exportMu; the batch goes to the exporter when it holds
// WithMaxExportBatchSize items, when the batch timeout has passed since its
// first item arrived (one timer for the processor, not one per shard), or
// at ForceFlush and Shutdown. So the exporter gets the batches the SDK's
// processors would send it, however many shards there are, and OnEnd is
// left as it was: one push into a ring.

// drainAction is the sink's Action: it hands each batch a drain worker took
// to the export batch.
type drainAction[T any] struct{ c *core[T] }

// Drain appends batch to the export batch, exporting it each time it fills
// (and, with a zero batch timeout, whatever it holds at the end). Failed
// exports go to otel.Handle once exportMu is released. Each export is
// timed as a call into the destination (exportBatch), so that a worker
// short of CPU, here or holding exportMu, does not read as a slow
// exporter.
func (a drainAction[T]) Drain(ctx context.Context, batch []T) {
	c := a.c
	var failed [2]error
	func() {
		calls, _ := sinkhook.CallsOf(ctx)
		c.lockExport(calls)
		defer c.exportMu.Unlock()
		failed = c.assemble(ctx, batch)
	}()
	for _, err := range failed {
		if err != nil {
			otel.Handle(err)
		}
	}
}

// lockExport takes exportMu for a drain worker's Drain call, whose timer
// is calls. A wait behind an export that no drain worker makes (the
// timer's, ForceFlush's, Shutdown's: untimed) is timed as a call into the
// destination, so that such an export that stalls makes pushes shed as a
// worker's does; a wait behind a worker's export (timed by that worker)
// or behind a worker that only appends is not. A worker that looks just
// before such an export begins waits untimed: should that export stall,
// its pushes wait up to sink.Config.HandOffWait before they shed.
func (c *core[T]) lockExport(calls sinkhook.Calls) {
	if c.exportMu.TryLock() {
		return
	}
	if c.untimedExport.Load() {
		calls.Begin()
		defer calls.End()
	}
	c.exportMu.Lock()
}

// assemble appends items to the export batch and exports it each time it
// fills, with ctx (the drain worker's); with a zero batch timeout it exports
// what is left at once. exportMu is held. items are at most a batch (the
// sink's BatchSize is at most the export batch size), so the batch fills at
// most once.
func (c *core[T]) assemble(ctx context.Context, items []T) (failed [2]error) {
	rest := items
	defer func() {
		// Only when an export below called runtime.Goexit, which ends this
		// drain worker: keep the items not appended yet (they fit, the
		// export emptied the batch) for the timer to export.
		if len(rest) > 0 {
			c.add(rest)
			if c.cfg.batchTimeout == 0 {
				c.timer.Reset(0)
			}
		}
	}()
	for len(rest) > 0 {
		n := min(len(rest), cap(c.batch)-len(c.batch))
		c.add(rest[:n])
		rest = rest[n:]
		if len(c.batch) == cap(c.batch) {
			failed[0] = c.exportBatch(ctx)
		}
	}
	if c.cfg.batchTimeout == 0 && len(c.batch) > 0 {
		failed[1] = c.exportBatch(ctx)
	}
	return failed
}

// add appends items to the export batch and, when they are its first,
// starts the batch timeout. exportMu is held; items fit.
func (c *core[T]) add(items []T) {
	if len(c.batch) == 0 && len(items) > 0 && c.cfg.batchTimeout > 0 {
		c.batchSince = time.Now()
		c.timer.Reset(c.cfg.batchTimeout)
	}
	c.batch = append(c.batch, items...)
}

// exportBatch hands the export batch to the exporter and starts a new one,
// also when the exporter calls runtime.Goexit. exportMu is held. The
// export is timed when ctx is a Drain call's (internal/sinkhook.CallsOf).
func (c *core[T]) exportBatch(ctx context.Context) error {
	c.timer.Stop()
	n := len(c.batch)
	calls, timed := sinkhook.CallsOf(ctx)
	calls.Begin()
	untimed := !timed
	if untimed {
		c.untimedExport.Store(true)
	}
	defer func() {
		calls.End()
		if untimed {
			c.untimedExport.Store(false)
		}
		clear(c.batch[:n]) // let the garbage collector have the items
		c.batch = c.batch[:0]
	}()
	return c.export(ctx, c.batch[:n:n]) // cap n: an append by the exporter cannot write into the batch
}

// batchTimedOut runs on the timer's goroutine: it exports the export batch
// if its batch timeout has passed. The ctx is cancelled when Shutdown's ctx
// ends first.
func (c *core[T]) batchTimedOut() {
	if err := c.exportDue(); err != nil {
		otel.Handle(err)
	}
}

func (c *core[T]) exportDue() error {
	c.exportMu.Lock()
	defer c.exportMu.Unlock()
	if len(c.batch) == 0 {
		return nil // exported when it filled, or by ForceFlush or Shutdown
	}
	if left := c.cfg.batchTimeout - time.Since(c.batchSince); left > 0 {
		c.timer.Reset(left) // the timer of a batch exported since; this one started later
		return nil
	}
	return c.exportBatch(c.aborted)
}

// flushBatch exports what the export batch holds, for ForceFlush, with its
// ctx, which is cancelled too when Shutdown's ctx ends first.
func (c *core[T]) flushBatch(ctx context.Context) error {
	c.exportMu.Lock()
	defer c.exportMu.Unlock()
	if len(c.batch) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.aborted, cancel)()
	return c.exportBatch(ctx)
}

// exportRest exports what the export batch holds once the sink's final
// drain is over, with Shutdown's ctx, and reports whether that completed
// the drain: false when ctx ended before or during the export.
func (c *core[T]) exportRest(ctx context.Context) (complete bool) {
	var failed error
	defer func() {
		if failed != nil {
			otel.Handle(failed) // after the unlock below
		}
	}()
	c.exportMu.Lock()
	defer c.exportMu.Unlock()
	if len(c.batch) == 0 {
		return true
	}
	if ctx.Err() != nil {
		return false
	}
	failed = c.exportBatch(ctx)
	return ctx.Err() == nil
}
