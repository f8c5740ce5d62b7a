package slogsink

import (
	"context"
	"log/slog"
	"time"

	"github.com/shardedsink/shardedsink/internal/layout"
	"github.com/shardedsink/shardedsink/logsink"
)

// core is what every handler derived from one New shares: the record
// writer (package logsink), which queues, sheds, counts and writes the
// formatted records, and what formats them. The fields that every logging
// call reads come first, apart from the lock of the Format handlers'
// writer, which locked mode writes.
type core struct {
	w    *logsink.Writer
	opts settings
	// rootFormat is the Format handler New made, with no attributes or
	// groups, which formats the drop reports.
	rootFormat slog.Handler
	_          [layout.CacheLine]byte

	// fw is the writer of every Format handler: read by every logging
	// call, its lock written only in locked mode (by every logging call).
	fw formatWriter
	_  [layout.CacheLine]byte
}

// DroppedMessage is the message of the record that reports, in the log
// stream, how many records were shed just before it. Its level is
// slog.LevelWarn; its attributes are "dropped", a uint64, and the group
// "dropped_by_level", which holds the count of each level that lost
// records ("DEBUG", "INFO", "WARN", "ERROR"; records of other levels are
// counted with the named level just below them).
const DroppedMessage = "slogsink: dropped records"

// levelNames names logsink's drop levels as slog does.
var levelNames = [len(logsink.DropLevels)]string{"DEBUG", "INFO", "WARN", "ERROR"}

// report is the record writer's Options.Report: it formats the drop report
// for d with the root's Format handler, which has no attributes or groups.
// It returns nil when the Format handler fails on it; that error or panic
// is counted (Errors without a record, or Panics) and reported.
func (c *core) report(d logsink.Drops) *logsink.Record {
	r := slog.NewRecord(time.Now(), slog.LevelWarn, DroppedMessage, 0)
	var by [len(logsink.DropLevels)]slog.Attr
	n := 0
	for i, k := range d.ByLevel {
		if k != 0 {
			by[n] = slog.Uint64(levelNames[i], k)
			n++
		}
	}
	r.AddAttrs(slog.Uint64("dropped", d.Total), slog.Attr{Key: "dropped_by_level", Value: slog.GroupValue(by[:n]...)})
	if d.WaitedOut != 0 {
		var wo [len(logsink.DropLevels)]slog.Attr
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
