package engine

import (
	"log/slog"
	"strconv"
	"time"
)

// levels is the number of level buckets that drops are counted in.
const levels = 4

// DropLevels returns the levels that drops are counted under, in the
// order of Drops.ByLevel (frontend.DropLevels).
func DropLevels() [levels]slog.Level {
	return [levels]slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError}
}

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

// Drops is what a drop report reports, field for field frontend.Drops,
// which says what each counts.
type Drops struct {
	Total            uint64
	ByLevel          [levels]uint64
	WaitedOut        uint64
	WaitedOutByLevel [levels]uint64
}

// DroppedMessage is the message of JSONReport (logsink.DroppedMessage).
const DroppedMessage = "logsink: dropped records"

// JSONReport is the default Report (frontend.JSONReport): one JSON line
// at level WARN,
//
//	{"time":"2026-12-02T03:04:05.123456789Z","level":"WARN","msg":"logsink: dropped records","dropped":1234,"dropped_by_level":{"INFO":1234}}
//
// whose "dropped_by_level" holds the levels that lost records, named as
// slog names them. When records waited out (Options.KeepWait), two more
// keys say how many, of "dropped", and at which levels:
//
//	...,"dropped_by_level":{"INFO":1230,"WARN":4},"waited_out":4,"waited_out_by_level":{"WARN":4}}
//
// It allocates nothing.
func JSONReport(d Drops) *Record {
	r := GetRecord()
	// Built on the stack: with every level's counts of up to 20 digits
	// and the waited-out keys, a report may pass InlineSize (it is then
	// a record of its own bytes).
	var buf [2 * InlineSize]byte
	b := buf[:0]
	b = append(b, `{"time":"`...)
	b = time.Now().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"WARN","msg":"`...)
	b = append(b, DroppedMessage...)
	b = append(b, `","dropped":`...)
	b = strconv.AppendUint(b, d.Total, 10)
	b = append(b, `,"dropped_by_level":`...)
	b = appendByLevel(b, &d.ByLevel)
	if d.WaitedOut != 0 {
		b = append(b, `,"waited_out":`...)
		b = strconv.AppendUint(b, d.WaitedOut, 10)
		b = append(b, `,"waited_out_by_level":`...)
		b = appendByLevel(b, &d.WaitedOutByLevel)
	}
	b = append(b, "}\n"...)
	r.e.append(b) // at most 433 bytes; in the slot unless waited_out and long counts push it over
	return r
}

// appendByLevel appends the JSON object of the levels whose count is not
// zero, named as slog names them.
func appendByLevel(b []byte, by *[levels]uint64) []byte {
	b = append(b, '{')
	first := true
	for i, n := range by {
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
	return append(b, '}')
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

// waitOut counts one record of level bucket lv that waited
// Options.KeepWait for room and found none: a drop like any other, counted
// in waitedOut too, and reported as such. The drop is counted first, and
// Stats loads waitedOut before dropped, so that a snapshot never has more
// of the second; takePending clamps a report's waited-out counts to its
// drops for the same reason.
func (st *shardState) waitOut(lv int) {
	st.drop(lv)
	st.waitedOut[lv].Add(1)
	st.pendingWaited[lv].Add(1)
}

// pendingDrops is the drops a shard has not reported yet.
type pendingDrops struct {
	counts, waited [levels]uint64
	total          uint64
}

// takePending hands the counts not yet reported on st to the caller: each
// swap gives a count to exactly one caller.
func (st *shardState) takePending() (p pendingDrops) {
	if st.pendingHint.Swap(0) == 0 {
		return p
	}
	for i := range p.counts {
		p.counts[i] = st.pending[i].Swap(0)
		p.total += p.counts[i]
	}
	for i := range p.waited {
		// Never more than counts[i] but for the waits counted between
		// the two swaps, whose drops the next report carries: clamp, and
		// leave the rest for it.
		w := st.pendingWaited[i].Swap(0)
		if w > p.counts[i] {
			st.pendingWaited[i].Add(w - p.counts[i])
			w = p.counts[i]
		}
		p.waited[i] = w
	}
	return p
}

// givePending puts p back for a later report.
func (st *shardState) givePending(p pendingDrops) {
	for i, n := range p.counts {
		if n != 0 {
			st.pending[i].Add(n)
		}
		if w := p.waited[i]; w != 0 {
			st.pendingWaited[i].Add(w)
		}
	}
	st.pendingHint.Add(p.total)
}

// reportDrops pushes a marker, an entry that holds a drop report alone, for
// the records dropped on shard i so far, where the ring has room for it
// (reserve included); otherwise the counts go back to pending, for the
// next record to report. Records carry their reports in their own slots
// (see Stream.Push); Flush pushes markers for the drops that no record
// follows.
func (w *Writer) reportDrops(i int) {
	st := &w.shards[i]
	p := st.takePending()
	if p.total == 0 {
		return
	}
	if st.counts.addQueued(1) > int64(w.opts.RingCapacity) {
		st.counts.addQueued(-1)
		st.givePending(p)
		return
	}
	b := w.formatReport(p)
	if b == nil {
		// The report could not be formatted: it is lost (counted by the
		// front-end), the records it counted stay in Dropped.
		st.counts.addQueued(-1)
		return
	}
	st.markers.Add(1)
	b.e.shard, b.e.marker = int32(i), true
	if !w.handles[i].Push(b) {
		PutRecord(b)
		// A record that waits for room (KeepWait) took the place that
		// admission counted for the marker: the counts go back to
		// pending, for the next record to report.
		st.markers.Add(-1)
		st.counts.addQueued(-1)
		st.givePending(p)
	}
}

// formatReport formats the drop report for counts with Options.Report. It
// returns nil when Report returns nil or an empty record, or panics (a
// panic is counted in Panics and reported).
func (w *Writer) formatReport(p pendingDrops) (r *Record) {
	returned := false
	defer func() {
		if !returned {
			w.reportPanic("Report", recover())
			r = nil
		}
	}()
	d := Drops{Total: p.total, ByLevel: p.counts, WaitedOutByLevel: p.waited}
	for _, n := range p.waited {
		d.WaitedOut += n
	}
	r = w.opts.Report(d)
	returned = true
	if r != nil && r.Len() == 0 {
		PutRecord(r)
		return nil
	}
	return r
}
