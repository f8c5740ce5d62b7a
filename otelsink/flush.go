package otelsink

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"go.opentelemetry.io/otel"

	"github.com/shardedsink/shardedsink/sink"
)

// forceFlush is ForceFlush: it waits until the drain workers have handed
// every item pushed before the call to the export batch (sink.Flush), then
// exports the batch, reports the export failures since the previous
// report, and flushes a log exporter. It returns ctx.Err() when ctx ends
// first, even while an export or the exporter's ForceFlush ignores ctx.
func (c *core[T]) forceFlush(ctx context.Context) error {
	if atomic.LoadUint32(&c.closed) != 0 {
		return nil
	}
	if c.calledFromExport(ctx) {
		return fmt.Errorf("otelsink: ForceFlush called with the ctx of an export call: it would wait for that call: %w",
			sink.ErrCalledFromDrain)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	err := c.sink.Flush(ctx)
	if errors.Is(err, sink.ErrShutdown) {
		return c.awaitShutdown(ctx)
	}
	if err != nil {
		return err
	}
	err = untilDone(ctx, func() error {
		if err := c.flushBatch(ctx); err != nil {
			otel.Handle(err) // and counted, reported below
		}
		return nil
	})
	if err != nil {
		return err
	}
	if c.isSettled() {
		// A Shutdown cut short by its ctx overtook this flush: the items it
		// waited for may have been taken from the rings only to be dropped.
		return c.awaitShutdown(ctx)
	}
	// Report the failures since the previous report, each to one caller:
	// the compare-and-swap keeps two concurrent ForceFlush calls from
	// reporting one failure twice or moving the mark back.
	var reported error
	now := atomic.LoadUint64(&c.exportErrors)
	for {
		prev := atomic.LoadUint64(&c.errorsReported)
		if now <= prev {
			break
		}
		if atomic.CompareAndSwapUint64(&c.errorsReported, prev, now) {
			reported = fmt.Errorf("otelsink: %d export(s) failed since the previous ForceFlush, the last one: %w",
				now-prev, *c.lastErr.Load())
			break
		}
	}
	return join(reported, c.flushExporter(ctx))
}

// awaitShutdown is the end of a ForceFlush during which Shutdown stopped
// the drain workers, or settled the counts: Shutdown's drain took over the
// items it waited for, so it returns that Shutdown's result: nil, or an
// error that wraps it (the items not exported were dropped, or the
// exporter's Shutdown failed).
func (c *core[T]) awaitShutdown(ctx context.Context) error {
	select {
	case <-c.shutdownDone:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := c.shutdownErr; err != nil {
		return fmt.Errorf("otelsink: Shutdown began while ForceFlush waited, and returned: %w", err)
	}
	return nil
}

// flushExporter calls the exporter's ForceFlush, if it has one (log
// exporters), serialised with the exports, unless the exporter is shut
// down. It returns ctx.Err() when ctx ends first, even if an export in
// progress or the exporter's ForceFlush ignores ctx.
func (c *core[T]) flushExporter(ctx context.Context) error {
	if !c.exp.flushes() {
		return nil
	}
	return untilDone(ctx, func() error {
		c.exportMu.Lock()
		defer c.exportMu.Unlock()
		if c.exporterDown {
			return nil
		}
		return c.exp.forceFlush(ctx)
	})
}

// isSettled reports whether a Shutdown cut short by its ctx has settled
// the counts.
func (c *core[T]) isSettled() bool {
	c.acctMu.Lock()
	defer c.acctMu.Unlock()
	return c.settled
}
