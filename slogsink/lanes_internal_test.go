package slogsink

import (
	"bytes"
	"io"
	"log/slog"
	"testing"
)

// In direct mode New makes formatLanes Format handlers, each its own
// (slog's lock with it); calls of the root go round the lanes, handlers
// derived from the root get the next lane, and their children keep it.
// With a Format of the user's, locked mode, there is one lane.
func TestFormatLanes(t *testing.T) {
	h, err := New(&bytes.Buffer{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(t.Context())
	c := h.c
	if len(c.lanes) != formatLanes {
		t.Fatalf("%d lanes in direct mode, want %d", len(c.lanes), formatLanes)
	}
	for i := range c.lanes {
		for j := range i {
			if c.lanes[i] == c.lanes[j] {
				t.Fatalf("lanes %d and %d are one Format handler", j, i)
			}
		}
	}
	seen := map[uint32]bool{}
	for range formatLanes {
		seen[c.pickLane()] = true
	}
	if len(seen) != formatLanes {
		t.Fatalf("%d calls of the root took %d lanes", formatLanes, len(seen))
	}
	a := h.WithAttrs([]slog.Attr{slog.Int("a", 1)}).(*Handler)
	b := h.WithAttrs([]slog.Attr{slog.Int("b", 1)}).(*Handler)
	if a.lane == b.lane {
		t.Fatalf("two handlers derived from the root share lane %d", a.lane)
	}
	if g := a.WithGroup("g").(*Handler); g.lane != a.lane {
		t.Fatalf("a child took lane %d, its parent is on %d", g.lane, a.lane)
	}

	locked, err := New(&bytes.Buffer{}, &Options{Format: func(w io.Writer, o *slog.HandlerOptions) slog.Handler {
		return slog.NewJSONHandler(w, o)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer locked.Close(t.Context())
	if len(locked.c.lanes) != 1 {
		t.Fatalf("%d lanes in locked mode, want 1", len(locked.c.lanes))
	}
}

// A call of the root takes a lane that no other call of the root holds:
// with every lane but one held, it gets that one, whichever is next in
// turn; with all held, the next in turn, unmarked; a released lane is
// free again. A root call's Handle releases its lane.
func TestARootCallTakesAFreeLane(t *testing.T) {
	h, err := New(&bytes.Buffer{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(t.Context())
	c := h.c
	const free = 5
	for i := range c.held {
		if i != free {
			c.held[i].Store(1)
		}
	}
	for range 2 * formatLanes {
		lane, held := c.takeLane()
		if lane != free || !held {
			t.Fatalf("takeLane with only lane %d free: lane %d, held %v", free, lane, held)
		}
		c.releaseLane(lane)
	}
	c.held[free].Store(1)
	if _, held := c.takeLane(); held {
		t.Fatal("takeLane marked a lane held when every lane was")
	}
	for i := range c.held {
		c.held[i].Store(0)
	}
	slog.New(h).Info("one record")
	for i := range c.held {
		if c.held[i].Load() != 0 {
			t.Fatalf("lane %d still held after a root call returned", i)
		}
	}
}
