package otelsink

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"go.opentelemetry.io/otel"

	"github.com/shardedsink/shardedsink/sink"
)

// shutdownCalled is Shutdown: the first call does the work and returns its
// result; later calls do nothing and return nil, as the SDK's processors'
// do (one made while the first runs waits for it, or for its own ctx).
func (c *core[T]) shutdownCalled(ctx context.Context) error {
	if c.calledFromExport(ctx) {
		return fmt.Errorf("otelsink: Shutdown called with the ctx of an export call: it would wait for that call; the processor keeps running: %w",
			sink.ErrCalledFromDrain)
	}
	first := false
	c.shutdownOnce.Do(func() { first = true })
	if !first {
		select {
		case <-c.shutdownDone:
			return nil
		default:
		}
		select {
		case <-c.shutdownDone:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c.shutdownErr = c.shutdown(ctx)
	close(c.shutdownDone)
	return c.shutdownErr
}

// shutdown stops the processor. The drain (the sink's final drain, then the
// rest of the export batch) runs on a goroutine of its own, so that
// Shutdown returns when ctx ends whatever the exporter does. Shutdown
// returns nil or the exporter's Shutdown error when everything was
// exported and the exporter shut down, and ctx.Err() itself whenever ctx
// ended before that (the SDK's contract): then the counts are settled at
// once and the exporter is shut down later, on another goroutine, once the
// export in progress has returned.
func (c *core[T]) shutdown(ctx context.Context) error {
	atomic.StoreUint32(&c.closed, 1)
	// Every push from here on that reaches the sink meets a closed ring.
	atomic.StoreUint64(&c.fullAtClose, c.sink.Dropped())
	atomic.StoreUint32(&c.fullSet, 1)
	defer context.AfterFunc(ctx, c.abort)() // ctx ends first: cancel the timer's exports too

	var drainErr error
	sunk := make(chan struct{})    // closed once the sink's Shutdown has returned
	drained := make(chan struct{}) // closed once the drain is over
	go func() {
		// An exporter that calls runtime.Goexit in the last export ends this
		// goroutine there: that batch is counted as failed, and drainErr,
		// still nil, says the drain is complete.
		defer close(drained)
		err := c.sink.Shutdown(ctx)
		close(sunk)
		if err != nil {
			drainErr = err // the sink returns an error only when ctx cut its drain short
			return
		}
		if !c.exportRest(ctx) {
			drainErr = ctxErr(ctx, context.DeadlineExceeded)
		}
	}()
	select {
	case <-drained:
	case <-ctx.Done():
		select { // both may be ready: prefer the drain's result
		case <-drained:
		default:
			// The sink's Shutdown returns as soon as it sees ctx ended, even
			// while a Drain call runs on; once it has, the ctx of its final
			// drain is cancelled, so that no drain worker takes from a ring
			// any more (but for a take in progress, see SpanProcessor.Shutdown).
			<-sunk
			return c.cutShort(ctx, ctx.Err(), drained)
		}
	}
	if drainErr != nil {
		return c.cutShort(ctx, drainErr, drained)
	}
	atomic.StoreUint32(&c.drained, 1)
	c.finish()
	// The counts are final; only the exporter's ForceFlush and Shutdown are
	// left, and an exporter that ignores ctx must not keep Shutdown waiting.
	return untilDone(ctx, func() error { return c.shutdownExporter(ctx) })
}

// cutShort ends a Shutdown whose ctx ended before its work was done: it
// settles the counts (the batch in the exporter's hands failed, the items
// not exported are dropped, and no export starts any more), shuts the
// exporter down once the drain goroutine and the drain workers are done,
// with a ctx of its own (lateCtx), and returns ctx.Err() itself (cause is
// the error that says ctx ended, for ctxErr).
func (c *core[T]) cutShort(ctx context.Context, cause error, drained <-chan struct{}) error {
	c.settle(ctx)
	go func() {
		<-drained
		<-c.sink.Done()
		c.finish()
		lctx, cancel := c.lateCtx(ctx)
		defer cancel()
		if err := c.shutdownExporter(lctx); err != nil {
			otel.Handle(err)
		}
	}()
	return ctxErr(ctx, cause)
}

// lateCtx is the ctx of the exporter's Shutdown (and, for logs, ForceFlush)
// after a Shutdown that ctx cut short: ctx's values, but not its end, and
// the export timeout (DefaultExportTimeout when that is zero), so that the
// exporter can still flush and close its connections, within a bound.
func (c *core[T]) lateCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	t := c.cfg.exportTimeout
	if t <= 0 {
		t = DefaultExportTimeout
	}
	return context.WithTimeout(context.WithoutCancel(ctx), t)
}

// ctxErr is ctx.Err() for a Shutdown that ctx cut short. ctx.Err() can still
// be nil for an instant after ctx's deadline has passed, when the sink saw
// the deadline before ctx's own timer fired: it is then the error cause
// wraps (context.DeadlineExceeded unless cause says Canceled), which
// ctx.Err() is about to return.
func ctxErr(ctx context.Context, cause error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if errors.Is(cause, context.Canceled) {
		return context.Canceled
	}
	return context.DeadlineExceeded
}

// settle makes the counts final after Shutdown's ctx ended with an export
// possibly in progress: that export's batch counts as failed, and from now
// on Stats counts every item accepted into the sink and not exported or
// failed as dropped (in the rings, in a drain worker's hands or in the
// export batch).
func (c *core[T]) settle(ctx context.Context) {
	c.acctMu.Lock()
	defer c.acctMu.Unlock()
	if c.settled {
		return
	}
	c.settled = true
	if n := c.inExport; n > 0 {
		err := fmt.Errorf("otelsink: export of %d %s still running when Shutdown's ctx ended: %w", n, c.unit, context.Cause(ctx))
		c.lastErr.Store(&err)
		atomic.AddUint64(&c.failed, n)
		atomic.AddUint64(&c.exportErrors, 1)
	}
	atomic.StoreUint32(&c.drained, 1)
}

// finish marks Shutdown's work as over for the metrics (metric.go): the
// counts are final, and no drain worker runs.
func (c *core[T]) finish() {
	atomic.StoreUint32(&c.finished, 1)
	c.obs.final(c)
}

// shutdownExporter marks the exporter as shut down (no export starts after
// this), stops the batch timer, and calls the exporter's ForceFlush (log
// exporters, while ctx is live) and Shutdown, serialised with the exports:
// it waits for one in progress. A failure is counted.
func (c *core[T]) shutdownExporter(ctx context.Context) error {
	c.exportMu.Lock()
	defer c.exportMu.Unlock()
	c.acctMu.Lock()
	c.exporterDown = true
	c.acctMu.Unlock()
	c.timer.Stop()
	c.abort()
	var flushErr error
	if ctx.Err() == nil {
		flushErr = c.exp.forceFlush(ctx)
	}
	err := join(flushErr, c.exp.shutdown(ctx))
	if err != nil {
		atomic.StoreUint64(&c.shutdownErrors, 1)
	}
	return err
}
