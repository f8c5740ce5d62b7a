package logsink

import (
	"log/slog"
	"strconv"
	"time"
)

// levels is the number of level buckets that drops are counted in.
const levels = 4

// DropLevels are the levels that drops are counted under, in the order of
// Drops.ByLevel: a record of level l is counted under the highest of them
// at or below l, and under slog.LevelDebug when l is below them all.
var DropLevels = [levels]slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError}

// levelNames names the buckets as slog does.
var levelNames = [levels]string{"DEBUG", "INFO", "WARN", "ERROR"}

// levelIndex returns the bucket of l: DEBUG below INFO, INFO below WARN,
// WARN below ERROR, ERROR at and above it.
func levelIndex(l slog.Level) int {
	switch {
	case l < slog.LevelInfo:
		return 0
	case l < slog.LevelWarn:
		return 1
	case l < slog.LevelError:
		return 2
	default:
		return 3
	}
}

// Drops is what a drop report reports: the records lost at one point of a
// shard's stream since the last report.
type Drops struct {
	// Total is the number of records lost; it is never 0 in a report.
	Total uint64
	// ByLevel splits Total by level, in the order of [DropLevels].
	ByLevel [levels]uint64
}

// DroppedMessage is the message of the default drop report, [JSONReport].
const DroppedMessage = "logsink: dropped records"

// JSONReport is the default Options.Report: one JSON line at level WARN,
//
//	{"time":"2026-12-02T03:04:05.123456789Z","level":"WARN","msg":"logsink: dropped records","dropped":1234,"dropped_by_level":{"INFO":1234}}
//
// whose "dropped_by_level" holds the levels that lost records, named as
// slog names them. It allocates nothing.
func JSONReport(d Drops) *Record {
	r := GetRecord()
	b := r.e.inline[:0]
	b = append(b, `{"time":"`...)
	b = time.Now().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"WARN","msg":"`...)
	b = append(b, DroppedMessage...)
	b = append(b, `","dropped":`...)
	b = strconv.AppendUint(b, d.Total, 10)
	b = append(b, `,"dropped_by_level":{`...)
	first := true
	for i, n := range d.ByLevel {
		if n == 0 {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, levelNames[i]...)
		b = append(b, `":`...)
		b = strconv.AppendUint(b, n, 10)
	}
	b = append(b, "}}\n"...)
	r.e.n = int32(len(b)) // at most about 200 bytes: within the slot
	return r
}

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
// (see Stream.Push); Flush pushes markers for the drops that no record
// follows.
func (c *Writer) reportDrops(i int) {
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
		// The report could not be formatted: it is lost (counted by the
		// front-end), the records it counted stay in Dropped.
		st.queued.Add(-1)
		return
	}
	st.markers.Add(1)
	b.e.shard, b.e.marker = int32(i), true
	pushed := c.handles[i].Push(b.e)
	PutRecord(b)
	if !pushed {
		// Not reached: queued, which admission kept at most the ring's
		// capacity, is never below the ring's length.
		st.markers.Add(-1)
		st.queued.Add(-1)
		st.givePending(counts, total)
	}
}

// formatReport formats the drop report for counts with Options.Report. It
// returns nil when Report returns nil or an empty record, or panics (a
// panic is counted in Panics and reported).
func (c *Writer) formatReport(counts [levels]uint64, total uint64) (r *Record) {
	returned := false
	defer func() {
		if !returned {
			c.reportPanic("Options.Report", recover())
			r = nil
		}
	}()
	r = c.opts.report(Drops{Total: total, ByLevel: counts})
	returned = true
	if r != nil && r.Len() == 0 {
		PutRecord(r)
		return nil
	}
	return r
}
