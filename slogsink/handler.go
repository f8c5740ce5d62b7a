package slogsink

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/shardedsink/shardedsink/logsink/frontend"
)

// Handler is an slog.Handler that does not wait for a slow writer (but
// for the records that matter, up to a bound, and for a drain worker that
// is short of CPU: the package doc's guarantee 1). See the package
// documentation for what it promises and what it costs.
//
// A Handler is safe for concurrent use. The handlers derived from it with
// WithAttrs and WithGroup share its sink, writer and counters; Flush, Close
// and the counters of any of them act on all of them.
type Handler struct {
	c *core
	s frontend.Stream // the shard every record of this handler goes to
	// fmt is the Format handler of this handler, derived from its
	// parent's with one WithAttrs or WithGroup; nil when that call
	// panicked, and lazy builds it again. The root's is c.lanes[0], but
	// each call of the root takes the next lane (see core.lanes); lane is
	// the one that a derived handler's fmt, and its children's, descend
	// from.
	fmt  slog.Handler
	lazy *lazyFormat
	lane uint32
	root bool
}

// New returns a Handler that writes to w. Records are formatted by
// opts.Format (default slog.NewJSONHandler) on the goroutine that logs, and
// their bytes travel through the sink; the drain workers copy the bytes of
// a batch into one Write of at most 256 KiB (a longer record is written
// alone). Writes never overlap, so w need not be safe for
// concurrent use.
//
// New returns an error wrapping [ErrInvalidOptions] that names the field and
// the value of every invalid option (a nil w, a negative size other than
// MaxQueuedBytes, a size beyond the sink's limits, a Format that returns
// nil or panics); nothing is started then. Otherwise the drain workers run
// until [Handler.Close].
func New(w io.Writer, opts *Options) (*Handler, error) {
	o, err := opts.settle(w)
	if err != nil {
		return nil, err
	}
	c := &core{opts: o}
	c.fw.direct = o.direct
	if c.rootFormat, err = o.newFormat(&c.fw); err != nil {
		return nil, err
	}
	c.lanes = []slog.Handler{c.rootFormat}
	for o.direct && len(c.lanes) < formatLanes {
		f, err := o.newFormat(&c.fw)
		if err != nil {
			return nil, err
		}
		c.lanes = append(c.lanes, f)
	}
	c.held = make([]laneFlag, len(c.lanes))
	if c.w, err = frontend.New(w, &o.sink, c.report); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	return &Handler{c: c, s: c.w.Root(), fmt: c.rootFormat, root: true}, nil
}

// Enabled reports whether level is at or above the handler's Level. It runs
// on the caller's goroutine and is all that a disabled record costs.
func (h *Handler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= h.c.opts.hopts.Level.Level()
}

// Handle formats r with the Format handler, on the calling goroutine, hands
// the bytes to the handler's shard (in a pooled record buffer, in place
// for a record of up to 352 bytes) and returns nil.
// It does not wait for a slow writer, but a record at or above KeepLevel
// whose ring is full waits up to Options.KeepWait for room before it is
// dropped (counted in Stats.WaitedOut), and a call whose ring is full
// because the drain worker is short of CPU parks until the worker writes
// (logsink's hand-off; guarantee 1 of the package doc). With [JSON] and
// [Text] it takes no lock of slogsink's (slog's handler holds its own for
// one copy of the bytes); with another Format it waits for the other
// goroutines formatting through the same New (see Options.Format). While
// its ring backs up, one call per 100 µs yields the processor so that the
// drain worker gets a turn (see the package doc).
//
// A record is dropped and counted (see [Handler.Stats]) instead when its
// shard's ring is full; below KeepLevel already when the ring is full but
// for the reserve that only records at or above KeepLevel may use. Such a
// dropped record costs no formatting. A record longer than a slot is
// dropped, once formatted, when the bytes its shard holds would pass the
// shard's share of Options.MaxQueuedBytes (below KeepLevel, seven eighths
// of it; counted in Stats.DroppedForBytes too). The next record the shard
// accepts carries, in front of it in its own ring slot, a [DroppedMessage]
// record that says how many were dropped, and at which levels. After
// [Handler.Close] every record is dropped and counted.
//
// A Format handler (or its ReplaceAttr) that returns an error, panics or
// calls runtime.Goexit loses that record only: it is counted in Errors
// (a panic also in Panics) and OnError receives the error; the panic does
// not reach the caller. A record it writes no bytes for is counted in
// Empty. ctx is passed to the Format handler and not kept.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	// Begin counts a record it refuses (closed, or its ring full) before
	// anything is formatted; End, deferred, runs even when the Format
	// handler calls runtime.Goexit, so that Close does not wait for it.
	call, ok := h.s.Begin(r.Level)
	if !ok {
		return nil
	}
	defer h.s.End()
	c := h.c
	f := h.fmt
	if h.root {
		lane, held := c.takeLane()
		if held {
			defer c.releaseLane(lane)
		}
		f = c.lanes[lane]
	} else if f == nil {
		if f = h.lazy.get(h); f == nil {
			c.w.Fail(1, nil) // its With failed again: counted and reported there
			return nil
		}
	}
	b, err := c.format(ctx, f, r, true, "the Format handler")
	if b == nil {
		switch {
		case err == nil:
			c.w.CountEmpty()
		case err != errRecovered: // a panic is counted by format
			c.w.Fail(1, err)
		}
		return nil
	}
	h.s.Push(call, r.Level, b)
	return nil
}
