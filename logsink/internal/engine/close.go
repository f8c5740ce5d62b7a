package engine

import (
	"context"
	"errors"
	"time"

	"github.com/shardedsink/shardedsink/internal/backoff"
	"github.com/shardedsink/shardedsink/internal/sinkhook"
	"github.com/shardedsink/shardedsink/sink"
)

// ErrClosed is what Flush returns once the Writer is closed.
var ErrClosed = errors.New("logsink: writer is closed")

// Flush is logsink.Writer.Flush: first it pushes a drop report for the
// records dropped so far that no later record has reported yet, where the
// ring has room for it (otherwise the next record reports them); then it
// waits for the sink's Flush. It returns ErrClosed once the Writer is
// closed.
func (w *Writer) Flush(ctx context.Context) error {
	// The same pairing with Close as in Stream.Begin: the drop reports pushed
	// here are drained before Close shuts the sink down, or Flush sees
	// closed and pushes none (Close then writes them itself).
	if !w.enter() {
		return ErrClosed
	}
	for i := range w.shards {
		if w.shards[i].pendingHint.Load() != 0 {
			w.reportDrops(i)
		}
	}
	w.leave()
	err := w.sink.Flush(ctx)
	if errors.Is(err, sink.ErrShutdown) {
		return ErrClosed
	}
	return err
}

// enter counts a Flush in flight on every shard and reports whether the
// Writer is still open; leave ends it. See Stream.Begin for the pairing with
// Close.
func (w *Writer) enter() bool {
	for i := range w.shards {
		w.shards[i].counts.begin()
	}
	if w.isClosed() {
		w.leave()
		return false
	}
	return true
}

func (w *Writer) leave() {
	for i := range w.shards {
		w.shards[i].counts.end()
	}
}

// Close is logsink.Writer.Close: it runs once, and every call returns the
// first call's result (or its own ctx.Err(), while the first works).
func (w *Writer) Close(ctx context.Context) error {
	first := false
	w.closeOnce.Do(func() { first = true })
	if !first {
		select {
		case <-w.closeDone:
			return w.closeErr
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	defer close(w.closeDone)
	w.closeErr = w.close(ctx)
	return w.closeErr
}

func (w *Writer) close(ctx context.Context) error {
	// Every logging call and Flush from now on sees closed, or is counted in
	// inflight; see Stream.Begin for the pairing.
	w.markClosed() // the records waiting for room (KeepWait) are shed now
	if err := w.waitQuiet(ctx); err != nil {
		_ = w.sink.Shutdown(ctx) // ctx has ended: returns at once, cancelling Drain
		return err
	}
	if err := w.sink.Shutdown(ctx); err != nil {
		// The sink's error wraps ctx's and says what it left; Close
		// returns ctx.Err() itself, as its doc says (Abandoned counts what
		// is left).
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return context.DeadlineExceeded // ctx's deadline passed before its timer fired
		}
		return err
	}
	// The workers have exited and nothing pushes any more: what is pending
	// was dropped after the last record of its shard. Write it in place,
	// on a goroutine of its own, so that a destination or Report that
	// calls runtime.Goexit ends that goroutine and not Close's caller, and
	// a Write that blocks keeps Close only until ctx ends.
	fin := make(chan struct{})
	go func() {
		defer close(fin)
		defer w.deliverErrors()
		untimed, _ := sinkhook.CallsOf(context.Background()) // not a Drain call's: times nothing
		for i := range w.shards {
			st := &w.shards[i]
			if p := st.takePending(); p.total != 0 {
				if b := w.formatReport(p); b != nil {
					w.write(untimed, b.Bytes(), 0)
					PutRecord(b)
				}
			}
		}
	}()
	select {
	case <-fin:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitQuiet waits until no logging call or Flush is between its closed
// check and its push, polling with a backoff from 1 µs to 1 ms: such a
// call runs for a few microseconds (one record's formatting) unless it is
// preempted.
func (w *Writer) waitQuiet(ctx context.Context) error {
	return backoff.Poll(ctx, time.Microsecond, time.Millisecond, nil, nil, func() bool {
		for i := range w.shards {
			if w.shards[i].counts.inflight() != 0 {
				return false
			}
		}
		return true
	})
}

// Done returns a channel that is closed once Close has stopped the drain
// workers and the last of them has exited (logsink.Writer.Done).
func (w *Writer) Done() <-chan struct{} { return w.sink.Done() }

// Dropped returns Counts().Dropped's sum, without allocating.
func (w *Writer) Dropped() uint64 {
	var total uint64
	for lv := range levels {
		total += w.closedDrops[lv].Load()
		for i := range w.shards {
			total += w.shards[i].dropped[lv].Load()
		}
	}
	return total
}

// Written returns the records written by Writes that succeeded; drop
// reports are not counted.
func (w *Writer) Written() uint64 { return w.written.Load() }

// Errors returns the records lost to an error or a panic.
func (w *Writer) Errors() uint64 { return w.failed.Load() }
