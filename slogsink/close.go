package slogsink

import (
	"context"
	"errors"

	"github.com/shardedsink/shardedsink/logsink"
)

// Flush waits until every record handled before the call has been written
// (or counted as failed). First it pushes a [DroppedMessage] record for the
// records dropped so far that no later record has reported yet, where the
// ring has room for it (otherwise the next record reports them). It
// returns nil, ctx.Err() when ctx ends first, and [ErrClosed] once the
// handler is closed. Loggers may keep logging meanwhile.
func (h *Handler) Flush(ctx context.Context) error {
	err := h.c.w.Flush(ctx)
	if errors.Is(err, logsink.ErrClosed) {
		return ErrClosed
	}
	return err
}

// Close stops the handler: records handled from now on are dropped and
// counted; the records handled before are written, followed by a
// [DroppedMessage] record for any drops not yet reported; then the drain
// workers stop. It returns nil, or ctx.Err() when ctx ends first: the
// records still buffered then are not written, and are counted in
// Stats().Abandoned once the workers have exited ([Handler.Done]); with
// Options.SpillDir they go to disk instead, for the next handler on the
// directory, and are counted in Stats().OnDisk ([Stats] has the identity).
//
// Close runs once; every call returns the first call's result, and a call
// made while the first is still working returns when it does, or with its
// own ctx.Err(). Close does not close the writer. A panic in the writer or
// the Format handler while Close writes the last drop report is recovered
// and counted, as on the drain workers.
func (h *Handler) Close(ctx context.Context) error { return h.c.w.Close(ctx) }

// Done returns a channel that is closed once Close has stopped the drain
// workers and the last of them has exited; after a Close whose ctx ended
// first, that is when the last Write in flight has returned. From then on
// the counts of [Handler.Stats] are final.
func (h *Handler) Done() <-chan struct{} { return h.c.w.Done() }

// Dropped returns Stats().Dropped, without allocating.
func (h *Handler) Dropped() uint64 { return h.c.w.Dropped() }

// Written returns Stats().Written: the records written by Writes that
// succeeded; [DroppedMessage] records are not counted.
func (h *Handler) Written() uint64 { return h.c.w.Written() }

// Errors returns Stats().Errors: the records lost to an error or a panic.
func (h *Handler) Errors() uint64 { return h.c.w.Errors() }
