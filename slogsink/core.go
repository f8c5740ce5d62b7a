package slogsink

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/internal/layout"
	"github.com/shardedsink/shardedsink/logsink/frontend"
)

// core is what every handler derived from one New shares: the record
// writer (package logsink), which queues, sheds, counts and writes the
// formatted records, and what formats them. The fields that every logging
// call reads come first, apart from the lock of the Format handlers'
// writer, which locked mode writes.
type core struct {
	w    *frontend.Writer
	opts settings
	// rootFormat is the Format handler New made, with no attributes or
	// groups, which formats the drop reports.
	rootFormat slog.Handler
	// lanes are the root's Format handlers, rootFormat first: in direct
	// mode formatLanes of them, one otherwise (locked mode's lock
	// serializes the calls anyway). Each has a mutex of its own: slog's
	// handlers lock one around the Write of every record, and the
	// handlers derived from one share it, so that with one handler every
	// goroutine that logs waits on one lock. A call of the root takes the
	// first lane from the next in turn that no other call of the root
	// holds (takeLane); a derived handler keeps the lane it got at its
	// With.
	lanes []slog.Handler
	// held marks the lanes that a call of the root is formatting on
	// (takeLane), one cache line each.
	held []laneFlag
	_    [layout.CacheLine]byte

	// nextLane counts the lanes handed out: written by every call of the
	// root in direct mode.
	nextLane atomic.Uint32
	_        [layout.CacheLine]byte

	// fw is the writer of every Format handler: read by every logging
	// call, its lock written only in locked mode (by every logging call).
	fw formatWriter
	_  [layout.CacheLine]byte
}

// formatLanes is how many Format handlers, each with slog's lock of its
// own, a New makes in direct mode. With one, 64 goroutines logging through
// one handler on 2 cores queued on slog's lock: a holder preempted
// mid-Write put the lock into its starvation mode, which hands it to the
// next waiter whether or not that one runs, and callers stood runnable on
// it for 17 ms at a time (go test -trace, -bench
// 'KeepWait$/stall=200ms/keepwait=1ms/spill' ./slogsink/). That probe's
// longest call, 8 interleaved runs (2-core AMD EPYC): 13.7 to 37.2 ms,
// median 19.0, with 16 lanes; 20.3 to 33.4, median 24.9, with 8; 25.3 to
// 51.5, median 41.6, with one. The cost: New makes 16 handlers, and a call
// of the root adds one atomic add.
const formatLanes = 16

// laneFlag is 1 while a call of the root formats on its lane: a line of
// its own, since every call of the root writes one.
type laneFlag struct {
	atomic.Uint32
	_ [layout.CacheLine - 4]byte
}

// takeLane returns the lane of a call of the root and whether it marked
// it held, which the caller undoes with releaseLane once it has
// formatted: the first lane from the next in turn (pickLane) that no
// other call of the root holds, or, when all are held, the next in turn
// unmarked (slog's lock then orders the calls). A call that picked a held
// lane waited on slog's lock for its holder, and a holder that loses its
// processor mid-Write keeps it for the scheduler's round of every
// runnable goroutine: callers of slogsink's stalled-pipe probe with a
// spill directory waited on it for up to 33 ms (go test -trace, -bench
// 'KeepWait$/stall=1s/keepwait=1ms/spill' ./slogsink/). That probe's
// longest call, medians of two batches of 10 interleaved runs (2-core
// AMD EPYC): 16.9 and 16.0 ms with free lanes taken, 20.5 and 20.1 ms
// with the lanes taken in turn; without the spill directory 16.8 and
// 15.3 ms. The cost: a compare-and-swap and a store on the lane's line
// per call of the root (a root call into io.Discard, benchstat n=10:
// 690 against 680 ns, p=0.97). Handlers derived with With keep their
// lane and may still wait on it.
func (c *core) takeLane() (lane uint32, held bool) {
	n := uint32(len(c.held))
	if n == 1 {
		return 0, false
	}
	next := c.pickLane()
	for k := range n {
		if l := (next + k) % n; c.held[l].CompareAndSwap(0, 1) {
			return l, true
		}
	}
	return next, false
}

// releaseLane ends the hold that takeLane marked on lane.
func (c *core) releaseLane(lane uint32) { c.held[lane].Store(0) }

// pickLane returns the lane of the next call of the root, or of the next
// derived handler: round-robin, and 0 without an atomic when there is one
// lane.
func (c *core) pickLane() uint32 {
	if len(c.lanes) == 1 {
		return 0
	}
	return c.nextLane.Add(1) % uint32(len(c.lanes))
}

// DroppedMessage is the message of the record that reports, in the log
// stream, how many records were shed just before it. Its level is
// slog.LevelWarn; its attributes are "dropped", a uint64, and the group
// "dropped_by_level", which holds the count of each level that lost
// records ("DEBUG", "INFO", "WARN", "ERROR"; records of other levels are
// counted with the named level just below them).
const DroppedMessage = "slogsink: dropped records"

// levelNames names the drop levels (frontend.DropLevels) as slog does.
var levelNames = [...]string{"DEBUG", "INFO", "WARN", "ERROR"}

// report is the record writer's drop report: it formats the drop report
// for d with the root's Format handler, which has no attributes or groups.
// It returns nil when the Format handler fails on it; that error or panic
// is counted (Errors without a record, or Panics) and reported.
func (c *core) report(d frontend.Drops) *frontend.Record {
	r := slog.NewRecord(time.Now(), slog.LevelWarn, DroppedMessage, 0)
	var by [len(d.ByLevel)]slog.Attr
	n := 0
	for i, k := range d.ByLevel {
		if k != 0 {
			by[n] = slog.Uint64(levelNames[i], k)
			n++
		}
	}
	r.AddAttrs(slog.Uint64("dropped", d.Total), slog.Attr{Key: "dropped_by_level", Value: slog.GroupValue(by[:n]...)})
	if d.WaitedOut != 0 {
		var wo [len(d.WaitedOutByLevel)]slog.Attr
		m := 0
		for i, k := range d.WaitedOutByLevel {
			if k != 0 {
				wo[m] = slog.Uint64(levelNames[i], k)
				m++
			}
		}
		r.AddAttrs(slog.Uint64("waited_out", d.WaitedOut), slog.Attr{Key: "waited_out_by_level", Value: slog.GroupValue(wo[:m]...)})
	}
	b, err := c.format(context.Background(), c.rootFormat, r, false, "the Format handler, formatting a drop report")
	if b == nil && err != nil && err != errRecovered {
		c.w.Fail(0, err)
	}
	return b
}
