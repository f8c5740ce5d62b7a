package slogsink

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/sink"
)

// Flush waits until every record handled before the call has been written
// (or its Write has failed). First it pushes a [DroppedMessage] record for
// the records dropped so far that no later record has reported yet, where
// the ring has room for it (otherwise the next record reports them). It
// returns nil, ctx.Err() when ctx ends first, and [ErrClosed] once the
// handler is closed. Loggers may keep logging meanwhile.
func (h *Handler) Flush(ctx context.Context) error {
	c := h.c
	if atomic.LoadUint32(&c.closed) != 0 {
		return ErrClosed
	}
	for i := range c.shards {
		if atomic.LoadUint64(&c.shards[i].pending) != 0 {
			c.reportDrops(i)
		}
	}
	err := c.sink.Flush(ctx)
	if errors.Is(err, sink.ErrShutdown) {
		return ErrClosed
	}
	return err
}

// Close stops the handler: records handled from now on are dropped and
// counted; the records handled before are formatted and written, followed
// by a [DroppedMessage] record for any drops not yet reported; then the
// drain workers stop. It returns nil, or ctx.Err() when ctx ends first: the
// records still buffered then are neither written nor counted in Dropped.
//
// Close runs once; every call returns the first call's result, and a call
// made while the first is still working returns when it does, or with its
// own ctx.Err(). Close does not close the writer.
func (h *Handler) Close(ctx context.Context) error {
	c := h.c
	first := false
	c.closeOnce.Do(func() { first = true })
	if !first {
		select {
		case <-c.closeDone:
			return c.closeErr
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c.closeErr = c.close(ctx)
	close(c.closeDone)
	return c.closeErr
}

func (c *core) close(ctx context.Context) error {
	// Every Handle from now on sees closed, or is counted in inflight; see
	// Handle for the pairing.
	atomic.StoreUint32(&c.closed, 1)
	if err := c.waitQuiet(ctx); err != nil {
		_ = c.sink.Shutdown(ctx) // ctx has ended: returns at once, cancelling Drain
		return err
	}
	if err := c.sink.Shutdown(ctx); err != nil {
		return err
	}
	// The workers have exited and nothing pushes any more: what is pending
	// was dropped after the last record of its shard. Write it in place.
	for i := range c.shards {
		st := &c.shards[i]
		if n := atomic.SwapUint64(&st.pending, 0); n != 0 {
			c.drainRun(ctx, st, []entry{marker(i, n)})
		}
	}
	return nil
}

// waitQuiet waits until no Handle call is between its closed check and its
// push, polling with a backoff from 1 µs to 1 ms: such a call runs for well
// under a microsecond unless it is preempted.
func (c *core) waitQuiet(ctx context.Context) error {
	for d := time.Microsecond; ; d = min(2*d, time.Millisecond) {
		quiet := true
		for i := range c.shards {
			if atomic.LoadInt64(&c.shards[i].inflight) != 0 {
				quiet = false
				break
			}
		}
		if quiet {
			return nil
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Dropped returns the number of records dropped so far: shed because their
// ring was full, or handled after Close. Under overload, once Close has
// returned nil, the records written plus Dropped equal the records handled,
// and the dropped attributes of the [DroppedMessage] records add up to
// Dropped less the records handled after Close.
func (h *Handler) Dropped() uint64 {
	c := h.c
	total := atomic.LoadUint64(&c.closedDrops)
	for i := range c.shards {
		total += atomic.LoadUint64(&c.shards[i].dropped)
	}
	return total
}

// Written returns the number of records written so far, by Writes that
// succeeded; [DroppedMessage] records are not counted.
func (h *Handler) Written() uint64 { return atomic.LoadUint64(&h.c.written) }

// Errors returns the number of failed Writes plus the number of errors
// returned by the Format handler. The records of a failed Write are neither
// written nor dropped; OnError receives each error.
func (h *Handler) Errors() uint64 { return atomic.LoadUint64(&h.c.errs) }
