package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/shardedsink/shardedsink/sink"
)

// Handler is an slog.Handler that never blocks the goroutine that logs: Handle
// copies the record into a sink and returns, and the sink's drain workers
// format whole batches of records with slog's text handler and write each
// batch to the io.Writer with one Write call. When the writer falls behind
// and the sink's rings fill, records are shed and counted (Dropped) instead
// of slowing the callers down.
//
// Records of one goroutine keep their order as long as they go to one shard:
// Handle pushes through the sink's handle-less Push, which keeps a home shard
// per P. Records from different goroutines may be written out of order.
//
// Call Close when done: it drains what is buffered and stops the workers.
type Handler struct {
	core *core
	ops  []op // the WithAttrs and WithGroup calls that made this handler, in order
}

// core is what all the handlers derived from one NewHandler share.
type core struct {
	sink   *sink.Sink[entry]
	opts   slog.HandlerOptions
	level  slog.Leveler
	mu     sync.Mutex // serialises the writes of whole batches
	w      io.Writer
	failed atomic.Uint64 // batches whose Write failed
}

// op is one WithAttrs (attrs != nil) or WithGroup call.
type op struct {
	group string
	attrs []slog.Attr
}

// entry is what travels through the sink: the record and the handler that
// received it, whose ops say how to format it.
type entry struct {
	h *Handler
	r slog.Record
}

// Options configures a Handler.
type Options struct {
	// Handler is passed to the text handler that formats the records;
	// its Level (default Info) is also checked by Enabled.
	Handler slog.HandlerOptions
	// Sink configures the sink; its zero value is the sink's defaults.
	// Logger defaults to a text logger on stderr, not slog.Default(), which
	// may well be this handler.
	Sink sink.Config[entry]
}

// NewHandler returns a Handler that writes to w.
func NewHandler(w io.Writer, opts Options) (*Handler, error) {
	c := &core{opts: opts.Handler, level: opts.Handler.Level, w: w}
	if c.level == nil {
		c.level = slog.LevelInfo
	}
	cfg := opts.Sink
	if cfg.Name == "" {
		cfg.Name = "slog"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	s, err := sink.New(cfg, sink.ActionFunc[entry](c.drain))
	if err != nil {
		return nil, err
	}
	c.sink = s
	return &Handler{core: c}, nil
}

// Enabled reports whether level is at or above the handler's level.
func (h *Handler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= h.core.level.Level()
}

// Handle hands a copy of r to the sink and returns nil at once. A record that
// finds its ring full is dropped and counted; see Dropped.
func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	h.core.sink.Push(entry{h: h, r: r.Clone()})
	return nil
}

// WithAttrs returns a handler that adds attrs to every record.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	return &Handler{core: h.core, ops: append(slices.Clip(h.ops), op{attrs: slices.Clone(attrs)})}
}

// WithGroup returns a handler that puts the attributes that follow in group
// name.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &Handler{core: h.core, ops: append(slices.Clip(h.ops), op{group: name})}
}

// Dropped returns the number of records shed because the sink was full.
func (h *Handler) Dropped() uint64 { return h.core.sink.Dropped() }

// FailedWrites returns the number of batches whose Write returned an error.
func (h *Handler) FailedWrites() uint64 { return h.core.failed.Load() }

// Flush waits until every record handled before the call has been written.
func (h *Handler) Flush(ctx context.Context) error { return h.core.sink.Flush(ctx) }

// Close writes what is buffered and stops the sink's workers. Records logged
// after Close are not written.
func (h *Handler) Close(ctx context.Context) error { return h.core.sink.Shutdown(ctx) }

// drain formats a batch into one buffer and writes it with one Write. It runs
// on the sink's workers, several at a time, so the text handlers are per
// call and the write is under the core's mutex.
func (c *core) drain(ctx context.Context, batch []entry) {
	var buf bytes.Buffer
	base := slog.NewTextHandler(&buf, &c.opts)
	derived := map[*Handler]slog.Handler{}
	for _, e := range batch {
		th, ok := derived[e.h]
		if !ok {
			th = base
			for _, o := range e.h.ops {
				if o.attrs != nil {
					th = th.WithAttrs(o.attrs)
				} else {
					th = th.WithGroup(o.group)
				}
			}
			derived[e.h] = th
		}
		_ = th.Handle(ctx, e.r) // writes into buf, which cannot fail
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.w.Write(buf.Bytes()); err != nil {
		c.failed.Add(1)
	}
}
