package engine

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"time"

	"github.com/shardedsink/shardedsink/sink"
)

// Stream is one way into a Writer: one shard, whose worker writes its
// records in the order they were accepted (logsink.Stream and
// frontend.Stream say what each method promises). Its zero value is not
// usable.
type Stream struct {
	w     *Writer
	shard int
	sh    *sink.Handle[*Record]
}

// Writer returns the Writer that s writes into.
func (s Stream) Writer() *Writer { return s.w }

// Write writes p as one record at Settings.Level; see WriteLevel.
func (s Stream) Write(p []byte) (int, error) { return s.WriteLevel(s.w.opts.Level, p) }

// WriteLevel copies p into a Record and pushes it as one record of level
// l (Begin, Push, End): logsink.Stream.WriteLevel says when it is dropped
// and what it waits for. It returns len(p), nil in every case; an empty p
// is counted in Empty, whatever the ring's state.
func (s Stream) WriteLevel(l slog.Level, p []byte) (int, error) {
	// Before admission: an empty record takes no room, so a full ring or
	// a closed Writer does not make it a drop.
	if len(p) == 0 {
		s.w.empty.Add(1)
		return 0, nil
	}
	c, ok := s.Begin(l)
	if !ok {
		return len(p), nil
	}
	defer s.End()
	r := GetRecord()
	r.e.append(p)
	s.Push(c, l, r)
	return len(p), nil
}

// A Call is one logging call that Begin started, from Begin to its
// Push: what its hand-offs have waited so far, so that the call waits at
// most sink's HandOffWait in them in all, whichever of Begin's admission
// and Push's it waits in. Its zero value has waited nothing.
type Call struct{ waited time.Duration }

// Begin starts a record of level l that the caller formats itself
// (frontend.Stream.Begin says the caller's part): it reports whether s
// takes a record of that level now, and returns the Call to hand to Push.
// When it returns false the record is already dropped and counted (the
// ring is full for l, or the Writer is closed). A record at or above
// KeepLevel is refused only once the Writer is closed, or with KeepWait
// off: Push waits for room for it. End must follow a true, even when the
// formatting panics: Close waits for every record begun to end.
//
// While the ring is more than a quarter full, one caller per 100 µs
// yields the processor (runtime.Gosched) in Begin, so that the drain
// worker, runnable but behind busy loggers, gets a turn; while records are
// parked for room that a spill directory's mover frees, one per
// millisecond, so that they get one (logsink's guarantee 1).
func (s Stream) Begin(l slog.Level) (Call, bool) {
	w := s.w
	st := &w.shards[s.shard]
	// Close stores closed, then waits for every inflight to read zero;
	// this add comes before the load of closed. Go's atomics are
	// sequentially consistent, so either this load sees closed, or Close
	// sees this call in flight and waits for its push before it shuts the
	// sink down: no record is pushed into a sink that nobody drains any
	// more. The same add reads queued (shardCounts).
	q := st.counts.begin()
	if w.isClosed() {
		st.counts.end()
		w.closedDrops[levelIndex(l)].Add(1)
		return Call{}, false
	}
	limit := w.opts.admissionLimit(l)
	parked, spilling, fair := s.w.hooks[s.shard].HandOffState()
	if q > w.opts.assistMark && w.assistTurn() || parked && spilling && w.parkedTurn() {
		// The ring is backing up and the worker may be runnable but
		// waiting for a P behind busy loggers, or records parked for
		// room wait for one behind this caller: let them run.
		runtime.Gosched()
		q = st.counts.queued()
		_, _, fair = s.w.hooks[s.shard].HandOffState()
	}
	// A fair hand-off queue (internal/sinkhook's HandOffState) means that records
	// parked for room have waited past a millisecond while callers that
	// never parked took it: this one takes its turn behind them.
	var c Call
	if (q >= limit || fair) && !s.handOff(st, limit, &c) && (l < w.opts.KeepLevel || w.opts.KeepWait == 0) {
		// A record at or above KeepLevel that may wait for room goes on
		// to Push, which waits.
		st.counts.end()
		st.drop(levelIndex(l))
		return c, false
	}
	return c, true
}

// handOff waits, while the shard's worker is short of CPU rather than in a
// slow Write (internal/sinkhook's HandOff), until queued is below limit again,
// and reports whether it is. It is what a push into a full ring of the
// sink does, for the limit of this admission, which sheds records below
// KeepLevel before the ring itself is full. Close ends the wait (the
// record is then shed).
func (s Stream) handOff(st *shardState, limit int64, c *Call) bool {
	w := s.w
	ok, waited := s.w.hooks[s.shard].HandOff(c.waited, func() bool { return w.isClosed() || st.counts.queued() < limit })
	c.waited += waited
	return ok && !w.isClosed()
}

// admit counts one more record in the shard's queued and reports whether
// it stayed within limit. While it would not, it hands off to the worker
// (handOff) and tries again; queued is raised when it returns, either way.
func (s Stream) admit(st *shardState, limit int64, c *Call) bool {
	for st.counts.addQueued(1) > limit {
		st.counts.addQueued(-1)
		if !s.handOff(st, limit, c) {
			st.counts.addQueued(1)
			return false
		}
	}
	return true
}

// End ends a record that Begin started.
func (s Stream) End() { s.w.shards[s.shard].counts.end() }

// Push hands r, the formatted bytes of a record of level l that Begin
// started, to the shard, and takes r over: the drain worker puts it back
// into the pool once the record is written, or Push at once when it is
// shed. The record is accepted, or dropped and counted, as WriteLevel
// says (at or above KeepLevel, after a wait of up to KeepWait for room); a
// report of earlier drops goes in front of it. An empty r is counted in
// Empty.
func (s Stream) Push(c Call, l slog.Level, r *Record) {
	w := s.w
	st := &w.shards[s.shard]
	lv := levelIndex(l)
	b := &r.e
	if b.len() == 0 {
		PutRecord(r)
		w.empty.Add(1)
		return
	}
	keep := l >= w.opts.KeepLevel
	if b.big != nil && !keep && w.opts.MaxQueuedBytes > 0 && !s.belowReserve(cap(b.big)) {
		PutRecord(r)
		st.dropForBytes(lv)
		return
	}
	report, pend := s.takeReport(st, b)
	full := !s.admit(st, w.opts.admissionLimit(l), &c)
	wait := keep && w.opts.KeepWait > 0 && (full || b.big != nil && w.opts.MaxQueuedBytes > 0 && !s.fitsShare(cap(b.big)))
	if full && !wait {
		st.counts.addQueued(-1)
		PutRecord(r)
		if report != nil {
			PutRecord(report)
			st.givePending(pend)
		}
		st.drop(lv)
		return
	}
	en := s.attach(r, report)
	if wait {
		// queued stays raised while the record waits: the records that
		// come meanwhile find the ring full, as it is.
		s.pushWait(en, lv, report != nil, &pend)
		return
	}
	if s.sh.Push(en) {
		return // the drain worker puts en back once it is written
	}
	s.refused(en, lv, keep, report != nil, &pend)
}

// takeReport takes the shard's pending drop counts, when it has any, and
// formats the report of them that rides in front of the record b: in its
// slot and taking no room of its own. It returns nil when there is none,
// when it could not be formatted (counted by the front-end; the records
// it counted stay in Dropped), and when it does not fit (reportFits),
// the counts then going back for a later record (or Flush, or Close).
// pendingHint is written only when a record is shed, so on the accept
// path this is a load of a line that stays in this core's cache.
func (s Stream) takeReport(st *shardState, b *entry) (*Record, pendingDrops) {
	if st.pendingHint.Load() == 0 {
		return nil, pendingDrops{}
	}
	pend := st.takePending()
	if pend.total == 0 {
		return nil, pend
	}
	report := s.w.formatReport(pend)
	if report != nil && !s.reportFits(report, b) {
		PutRecord(report)
		st.givePending(pend)
		return nil, pendingDrops{}
	}
	return report, pend
}

// attach returns the record to push for r: r itself, or with a report a
// new record that holds the report in front of r's bytes (r and report go
// back into the pool). Either way marked as a record of this stream's
// shard.
func (s Stream) attach(r, report *Record) *Record {
	en := r
	if report != nil {
		en = newRecord(report.Bytes(), r.e.bytes(), s.shard, false)
		PutRecord(report)
		PutRecord(r)
	}
	en.e.shard = int32(s.shard)
	en.e.marker = false
	return en
}

// refused ends a record en of level bucket lv that admission counted but
// whose push the sink refused. A record at or above KeepLevel that waits
// for room (queued counts it beyond the limit; see shardCounts)
// pushes as soon as the ring has a free slot, and may have taken this
// one's: a record at or above KeepLevel (keep) then waits for room as it
// would have had the ring been full at admission. Otherwise it is shed:
// for bytes when its shard's share of MaxQueuedBytes has no room for it
// (only a record longer than a slot holds bytes), else for a full ring;
// and once Close has begun, by a sink that Close shut down when its ctx
// ended before this push: a drop after Close. The report it carried goes
// back.
func (s Stream) refused(en *Record, lv int, keep, carries bool, pend *pendingDrops) {
	w := s.w
	st := &w.shards[s.shard]
	closed := w.isClosed()
	if keep && w.opts.KeepWait > 0 && !closed {
		s.pushWait(en, lv, carries, pend)
		return
	}
	size := cap(en.e.big) // the heap bytes the sink counts for it
	PutRecord(en)
	st.counts.addQueued(-1)
	if carries {
		st.givePending(*pend)
	}
	if !closed && size > 0 && w.opts.MaxQueuedBytes > 0 && !s.fitsShare(size) {
		st.dropForBytes(lv)
	} else {
		st.drop(lv)
	}
}

// pushWait pushes en, a record at or above KeepLevel of level bucket lv
// for which the ring (or the shard's share of MaxQueuedBytes) had no room,
// waiting up to Options.KeepWait for room (sink's Handle.PushWait). queued
// is already raised for it. Once Close has begun it sheds en at once; a
// record larger than the shard's share is shed at once too
// (sink.ErrValueTooLarge), for bytes. Otherwise en is pushed, or shed when
// the wait ends first (counted in waitedOut) or Close begins meanwhile,
// and then put back into the pool. With carries, en carries the report of
// pend, which goes back when en is shed.
func (s Stream) pushWait(en *Record, lv int, carries bool, pend *pendingDrops) {
	w := s.w
	st := &w.shards[s.shard]
	var err error
	if w.isClosed() {
		err = sink.ErrShutdown
	} else {
		// Allocates the ctx and its timer: only a record that found no
		// room pays for it.
		ctx, cancel := context.WithTimeout(w.closing, w.opts.KeepWait)
		err = s.sh.PushWait(ctx, en)
		cancel()
		if err == nil {
			return
		}
	}
	PutRecord(en)
	st.counts.addQueued(-1)
	if carries {
		st.givePending(*pend)
	}
	switch {
	case errors.Is(err, sink.ErrValueTooLarge):
		st.dropForBytes(lv)
	case errors.Is(err, context.DeadlineExceeded) && !w.isClosed():
		st.waitOut(lv)
	default:
		// Close began (closing was cancelled, or the sink shut down).
		st.drop(lv)
	}
}

// reportFits reports whether report may ride in front of the record b: it
// may, but when b fits its ring slot alone (it holds no heap bytes) and
// the two together would not, while the shard's share of MaxQueuedBytes
// has no room for the bytes they would then take. A small record is never
// shed for bytes because of a report.
func (s Stream) reportFits(report *Record, b *entry) bool {
	n := report.e.len() + b.len()
	return b.big != nil || n <= InlineSize || s.w.opts.MaxQueuedBytes == 0 || s.fitsShare(n)
}

// fitsShare reports whether a record of n heap bytes at or above KeepLevel
// fits into the stream's shard's share of MaxQueuedBytes now, reserve
// included: a soft view, as belowReserve's. A shard that holds nothing
// takes a record of any size.
func (s Stream) fitsShare(n int) bool {
	queued, share := s.w.hooks[s.shard].QueuedBytes()
	return queued == 0 || queued+int64(n) <= share
}

// belowReserve reports whether a record of n heap bytes below KeepLevel
// fits into the stream's shard without passing seven eighths of its share
// of MaxQueuedBytes, the rest being the reserve of the records at or above
// KeepLevel. It is a soft view, one atomic load: records in flight on
// other goroutines may take the room it saw. A shard that holds nothing
// takes a record of any size, as the sink does.
func (s Stream) belowReserve(n int) bool {
	queued, share := s.w.hooks[s.shard].QueuedBytes()
	return queued == 0 || queued+int64(n) <= share-share/8
}

// assistAfter is how long a Write must have been in progress before
// callers whose ring backs up yield anyway: a worker whose Write returned
// (a syscall that ended, a timer that fired) waits for a P like any other
// goroutine, up to the scheduler's 10 ms slice while loggers keep every P
// busy, and yielding lets it have one; before that, yielding would not
// help a worker that is still in its Write.
const assistAfter = time.Millisecond

// assistEvery is the least time between two yields of callers whose ring
// backs up. One yield lets the scheduler of that P run the worker if it is
// runnable (in the run queue, or readied by a timer that fired or a
// syscall that returned), and a few calls in a thousand pay for it, not
// every call: yielding on every call kept the log complete at 16 and 64
// goroutines but put the scheduler's wait (tens of microseconds to
// milliseconds) into the p99 of the call.
const assistEvery = 100 * time.Microsecond

// assistTurn reports whether a caller whose ring backs up should yield:
// not while a Write has been in progress for less than assistAfter, when
// yielding would not help a worker that is still in its Write; otherwise
// one caller per assistEvery (of callers that ask at once, one gets the
// turn).
func (w *Writer) assistTurn() bool {
	now := int64(time.Since(w.epoch))
	if ws := w.writeStart.Load(); ws != 0 && now-ws <= int64(assistAfter) {
		return false
	}
	return w.assists.Turn(now, assistEvery)
}

// parkedYieldEvery is the least time between two yields of callers that run
// while records are parked for room and the spill tier takes the shard's
// records (internal/sinkhook's HandOffState: the Write is slow, or the tier still
// holds records): the tier's mover frees room every millisecond and wakes
// parked records, which then wait for a processor that this caller holds.
// Without these yields a caller whose records the mover took as fast as it
// made them ran a whole scheduler slice and more, up to 24 ms in 2 slices
// in a trace of zapsink's stalled-pipe probe with a spill directory, while
// the records woken for room waited behind it. With them, that probe's
// longest call: zapsink Core 18.9 ms against 21.9, slogsink 22.2 against
// 27.1, zerologsink 17.6 against 20.3, and the callers made 13, 17 and 3 %
// fewer calls while the tier took (medians of 10 interleaved runs, 2-core
// AMD EPYC; cd zapsink && go test -run '^$' -bench
// 'StalledPipe/logger=zapsink-Core-SpillDir$' -benchtime 1x; zerologsink's
// 'StalledPipe/logger=zerologsink-SpillDir$'; slogsink's
// 'KeepWait$/stall=1s/keepwait=1ms/spill'). A yield every 100 µs
// (assistEvery) cut zapsink's longest call further but cost 22 % of the
// calls. Not otherwise: records parked on a worker short of CPU wait for
// the worker, and yields for those cost the healthy-file probe 9 % of its
// records (-bench 'File/logger=zapsink-Core/goroutines=64$').
const parkedYieldEvery = time.Millisecond

// parkedTurn reports whether a caller that runs while records are parked
// for the spill tier should yield: one caller per parkedYieldEvery.
func (w *Writer) parkedTurn() bool {
	return w.parkedYields.Turn(int64(time.Since(w.epoch)), parkedYieldEvery)
}

// Fail counts n records lost to err (a front-end's formatting that
// failed) in Errors and hands err, when not nil, to OnError.
func (w *Writer) Fail(n int, err error) {
	w.failed.Add(uint64(n))
	if err != nil {
		w.queueError(err)
		w.deliverErrors()
	}
}

// CountEmpty counts one record that had no bytes (a front-end's formatter
// that wrote none) in Empty.
func (w *Writer) CountEmpty() { w.empty.Add(1) }

// Panicked counts a panic that a front-end recovered (p; nil for a
// runtime.Goexit) in Panics and logs it, with its stack, through the
// Logger unless another report went out less than a minute ago. where
// names what panicked ("the Format handler").
func (w *Writer) Panicked(where string, p any) { w.reportPanic(where, p) }
