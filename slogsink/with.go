package slogsink

import (
	"fmt"
	"log/slog"
	"sync"
)

// WithAttrs returns a handler that adds attrs to every record, in a shard
// of its own (the next one, round-robin). Its Format handler is its
// parent's WithAttrs(attrs), called now, on the caller, as with a
// synchronous handler: slog's handlers resolve the attributes' LogValuers
// and format them once, here, and append them to the parent's formatted
// prefix. The cost is that call plus one allocation of 48 bytes.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	return h.derive(op{attrs: attrs}) // slog.Handler: the handler owns the slice
}

// WithGroup returns a handler that puts the attributes that follow in group
// name, in a shard of its own (the next one, round-robin); its Format
// handler is its parent's WithGroup(name). An empty name returns h.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return h.derive(op{group: name})
}

// op is one WithAttrs (attrs != nil) or WithGroup call.
type op struct {
	group string
	attrs []slog.Attr
}

// derive makes the handler for h plus o. When the Format handler's
// WithAttrs or WithGroup panics (a ReplaceAttr that panics) or returns
// nil, that is counted and reported, and the new handler tries again when
// it handles a record.
//
// A handler derived from the root gets the next lane (see core.lanes),
// one derived from another handler its parent's: slog formats a With's
// attributes when With is called, so a handler cannot be derived again on
// another lane later without formatting them anew.
func (h *Handler) derive(o op) *Handler {
	c := h.c
	d := &Handler{c: c, s: c.w.Stream(), lane: h.lane}
	if h.root {
		d.lane = c.pickLane()
	}
	if h.root || h.fmt != nil {
		d.fmt = c.apply(h.formatOn(d.lane), o)
	}
	if d.fmt == nil {
		d.lazy = &lazyFormat{parent: h, op: o}
	}
	return d
}

// formatOn returns the Format handler that a handler derived from h on
// lane derives from: the root's on that lane, any other handler's own
// (its lane), built again by lazy if its With failed, or nil when that
// fails again.
func (h *Handler) formatOn(lane uint32) slog.Handler {
	switch {
	case h.root:
		return h.c.lanes[lane]
	case h.fmt != nil:
		return h.fmt
	}
	return h.lazy.get(h)
}

// apply returns f with o applied, or nil when that panics (counted in
// Panics and reported) or returns nil (reported to OnError).
func (c *core) apply(f slog.Handler, o op) (out slog.Handler) {
	returned := false
	defer func() {
		if !returned {
			c.w.Panicked("the Format handler's WithAttrs or WithGroup", recover())
			out = nil
		}
	}()
	if o.attrs != nil {
		out = f.WithAttrs(o.attrs)
	} else {
		out = f.WithGroup(o.group)
	}
	returned = true
	if out == nil {
		c.w.Fail(0, fmt.Errorf("slogsink: the Format handler's %s returned nil", o.name()))
	}
	return out
}

func (o op) name() string {
	if o.attrs != nil {
		return "WithAttrs"
	}
	return "WithGroup"
}

// lazyFormat builds, at the first record, the Format handler of a handler
// whose WithAttrs or WithGroup failed: its attributes are then formatted
// at that time, not at the With. It tries again at every record until it
// succeeds.
type lazyFormat struct {
	parent *Handler
	op     op

	mu sync.Mutex
	f  slog.Handler // once built; under mu
}

// get returns the Format handler of h, whose lazy l is, building it if it
// is not yet, or nil when that fails again.
func (l *lazyFormat) get(h *Handler) slog.Handler {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		if pf := l.parent.formatOn(h.lane); pf != nil {
			l.f = h.c.apply(pf, l.op)
		}
	}
	return l.f
}
