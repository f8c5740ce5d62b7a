package slogsink

import (
	"context"
	"log/slog"
	"time"
)

// DroppedMessage is the message of the record that reports, in the log
// stream, how many records were shed just before it. Its level is
// slog.LevelWarn; its attributes are "dropped", a uint64, and the group
// "dropped_by_level", which holds the count of each level that lost
// records ("DEBUG", "INFO", "WARN", "ERROR"; records of other levels are
// counted with the named level just below them).
const DroppedMessage = "slogsink: dropped records"

// drop counts one record of level bucket lv dropped on this shard, to be
// reported by the next record or marker. The level count comes before the
// hint, so a reporter that sees the hint finds the count (or an earlier
// reporter has taken it).
func (st *shardState) drop(lv int) {
	st.dropped[lv].Add(1)
	st.pending[lv].Add(1)
	st.pendingHint.Add(1)
}

// dropForBytes counts one record of level bucket lv dropped on this shard
// for bytes (MaxQueuedBytes): a drop like any other, counted in forBytes
// too. dropped comes first, and Stats loads forBytes first, so that a
// snapshot never has more of the second.
func (st *shardState) dropForBytes(lv int) {
	st.drop(lv)
	st.forBytes.Add(1)
}

// takePending hands the counts not yet reported on st to the caller: each
// swap gives a count to exactly one caller.
func (st *shardState) takePending() (counts [levels]uint64, total uint64) {
	if st.pendingHint.Swap(0) == 0 {
		return counts, 0
	}
	for i := range counts {
		counts[i] = st.pending[i].Swap(0)
		total += counts[i]
	}
	return counts, total
}

// givePending puts counts back for a later report.
func (st *shardState) givePending(counts [levels]uint64, total uint64) {
	for i, n := range counts {
		if n != 0 {
			st.pending[i].Add(n)
		}
	}
	st.pendingHint.Add(total)
}

// reportDrops pushes a marker, an entry that holds a drop report alone, for
// the records dropped on shard i so far, where the ring has room for it
// (reserve included); otherwise the counts go back to pending, for the
// next record to report. Records carry their reports in their own slots
// (see Handle); Flush pushes markers for the drops that no record follows.
func (c *core) reportDrops(i int) {
	st := &c.shards[i]
	counts, total := st.takePending()
	if total == 0 {
		return
	}
	if st.queued.Add(1) > int64(c.opts.ringCapacity) {
		st.queued.Add(-1)
		st.givePending(counts, total)
		return
	}
	b := c.formatReport(counts, total)
	if b == nil {
		// The Format handler failed on the report: it is lost (counted in
		// Errors or Panics), the records it counted stay in Dropped.
		st.queued.Add(-1)
		return
	}
	st.markers.Add(1)
	b.shard, b.marker = int32(i), true
	pushed := c.handles[i].Push(*b)
	putEntry(b)
	if !pushed {
		// Not reached: queued, which admission kept at most the ring's
		// capacity, is never below the ring's length.
		st.markers.Add(-1)
		st.queued.Add(-1)
		st.givePending(counts, total)
	}
}

// formatReport formats the drop report for counts with the root's Format
// handler, which has no attributes or groups. It returns nil when the
// Format handler fails on it; that error or panic is counted (Errors
// without a record, or Panics) and reported.
func (c *core) formatReport(counts [levels]uint64, total uint64) *entry {
	r := slog.NewRecord(time.Now(), slog.LevelWarn, DroppedMessage, 0)
	var by [levels]slog.Attr
	n := 0
	for i, k := range counts {
		if k != 0 {
			by[n] = slog.Uint64(levelNames[i], k)
			n++
		}
	}
	r.AddAttrs(slog.Uint64("dropped", total), slog.Attr{Key: "dropped_by_level", Value: slog.GroupValue(by[:n]...)})
	b, err := c.format(context.Background(), c.rootFormat, r, false, "the Format handler, formatting a drop report")
	if b == nil && err != nil && err != errRecovered {
		c.failRecords(0, err)
	}
	return b
}
