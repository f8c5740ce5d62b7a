package sink

import (
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/shardedsink/shardedsink/internal/layout"
)

// drainState is what a shard's home worker records about its Drain calls
// and its backlog: whether a Drain call is running (the hand-off's and
// the spiller's test of a slow destination), and two recent maxima that
// tell a slow destination from a worker short of CPU (Stats.MaxDrainTime
// and Stats.MaxWorkerDelay, the overload report). One per shard, on cache
// lines of its own: the worker writes it twice per Drain call (and twice
// per call into the destination that the Action times), pushes read it
// only when their ring refused them, Stats and the monitor when they run.
type drainState struct {
	drainFields
	_ [layout.CacheLine - unsafe.Sizeof(drainFields{})%layout.CacheLine]byte
}

// drainFields are drainState's fields, apart so that its padding follows
// their size on every architecture. Every field is a plain integer used
// through sync/atomic's functions; times are Sink.now's.
type drainFields struct {
	// start is when the Drain call in progress began, 0 between calls.
	start int64
	// behind is when a Drain call returned with values still in the ring,
	// until the worker's next take (0 otherwise): a worker that is
	// runnable but not run leaves it set.
	behind int64
	// The longest Drain call, and the longest time from behind to the
	// next take, of the monitor's current interval (cur) and of the one
	// before (prev); the monitor rotates them (rotate).
	curDrain, prevDrain int64
	curLag, prevLag     int64
	// slowEnd is when the last Drain call that was slow for longer than
	// SlowDrain (the slowness of the destination, below) ended, 0 before
	// the first: the hand-off's fair mode follows it. stallEnd is the same for longer than
	// handOffStall: the hand-off's wait cap follows it.
	slowEnd, stallEnd int64
	// call is when the call into the destination in progress began
	// (callTimer.Begin), 0 when none; longestCall is the longest that
	// ended within the Drain call in progress, plus one (0: none did).
	call, longestCall int64
	// fastCur is the shortest call into the destination (the Drain call,
	// or its longest timed call) of the worker's current round of
	// paceRound calls, fastPrev that of the round before; fastN counts the
	// calls of the current round. Each holds the length plus one, 0 for
	// none yet. Only the worker writes them (drainEnded).
	fastCur, fastPrev, fastN int64
}

// The slowness of the destination, the one home of the rule that the
// hand-off (Sink.drainSlow, recheckIn, the windows of handoff.go) and the
// spiller (spillTier.due) follow. By default it is judged per shard, by
// its Drain calls: a Drain call in progress is slow once it has run
// longer than SlowDrain, and a Drain call that returned was slow for as
// long as it ran. But a worker short of CPU makes long Drain calls too:
// preempted between two Writes, it waits in the run queue, up to the
// runtime's 10 ms slice per goroutine ahead of it, and pushes that read
// that as a slow destination shed into a file that keeps up (zapsink's
// offered-rate probe, cd zapsink && go test -run '^$' -bench
// 'BenchmarkOffered/logger=zapsink-Core$' -benchtime 1x, built once with
// a count of each reason a push shed, since removed: every such shed
// happened with no Write in progress). So once the Action times its calls into the destination
// (callTimer; Sink.timed is set at the first), only those count, and for
// every shard alike (Sink.judges): the sink has one Action and, as a
// rule, one destination, which a worker may wait for behind another
// worker's call (a lock around a Write). A push into any shard's full
// ring then sheds once some worker's call into the destination has run
// longer than SlowDrain, and a Drain call that returned was slow for as
// long as its longest call into the destination. A worker that waits
// for a lock that another holds while it is merely preempted (not in a
// call) makes nobody shed.

// pending returns, at now, for how long the wait that decides the
// destination's slowness has lasted in this shard, and false when there
// is none: the call into the destination in progress when timed (the
// Action times its calls), the Drain call in progress otherwise.
func (d *drainState) pending(now int64, timed bool) (age int64, ok bool) {
	since := atomic.LoadInt64(&d.start)
	if timed {
		since = atomic.LoadInt64(&d.call)
	}
	return now - since, since != 0
}

// drainBegan records the start of a Drain call at now.
func (d *drainState) drainBegan(now int64) {
	atomic.StoreInt64(&d.longestCall, 0)
	atomic.StoreInt64(&d.start, now)
}

// drainEnded records the end, at now, of the Drain call that began at
// start: its slowness (see above; timed as in pending) opens the windows
// of slowEnd and stallEnd, and its length counts in the recent maximum.
func (d *drainState) drainEnded(start, now int64, timed bool) {
	atomic.StoreInt64(&d.start, 0)
	slowFor, called := now-start, true
	if timed {
		longest := atomic.LoadInt64(&d.longestCall)
		slowFor, called = max(longest-1, 0), longest != 0
		if c := atomic.SwapInt64(&d.call, 0); c != 0 {
			slowFor, called = max(slowFor, now-c), true // a call that the Action did not end
		}
	}
	if slowFor > int64(SlowDrain) {
		atomic.StoreInt64(&d.slowEnd, now)
	}
	if slowFor > int64(handOffStall) {
		atomic.StoreInt64(&d.stallEnd, now)
	}
	raise(&d.curDrain, now-start)
	if called {
		// A timed Drain call that made no call into the destination (an
		// Action that batches, as otelsink's) says nothing of its pace.
		d.paced(slowFor)
	}
}

// paceRound is the number of calls over which drainState keeps the
// shortest (paced): the shortest of the last paceRound to 2 × paceRound
// calls is the destination's pace.
const paceRound = 8

// paced counts a call into the destination that took took.
func (d *drainState) paced(took int64) {
	v := max(took, 0) + 1
	if n := atomic.LoadInt64(&d.fastN); n >= paceRound {
		atomic.StoreInt64(&d.fastPrev, atomic.LoadInt64(&d.fastCur))
		atomic.StoreInt64(&d.fastCur, v)
		atomic.StoreInt64(&d.fastN, 1)
		return
	}
	if c := atomic.LoadInt64(&d.fastCur); c == 0 || v < c {
		atomic.StoreInt64(&d.fastCur, v)
	}
	atomic.AddInt64(&d.fastN, 1)
}

// pace returns the shortest of the worker's recent calls into the
// destination (paceRound to 2 × paceRound of them), and false before the
// first. A worker short of CPU stretches calls; it does not shorten them:
// the shortest of several is the destination's own time, or close above.
func (d *drainState) pace() (int64, bool) {
	c, p := atomic.LoadInt64(&d.fastCur), atomic.LoadInt64(&d.fastPrev)
	if c == 0 {
		return 0, false
	}
	if p != 0 {
		c = min(c, p)
	}
	return c - 1, true
}

// callBegan records the start of a call into the destination at now.
func (d *drainState) callBegan(now int64) { atomic.StoreInt64(&d.call, now) }

// callEnded records the end, at now, of the call into the destination in
// progress, if one is.
func (d *drainState) callEnded(now int64) {
	if c := atomic.SwapInt64(&d.call, 0); c != 0 {
		raise(&d.longestCall, now-c+1)
	}
}

// leftBehind records that the worker, at now, left its ring holding
// values.
func (d *drainState) leftBehind(now int64) { atomic.StoreInt64(&d.behind, now) }

// took records a take at now: the lag since the worker left values
// behind, if it did, ends.
func (d *drainState) took(now int64) {
	if b := atomic.LoadInt64(&d.behind); b != 0 {
		atomic.StoreInt64(&d.behind, 0)
		raise(&d.curLag, now-b)
	}
}

// rotate starts a new interval of the recent maxima (the monitor, once per
// OverloadInterval).
func (d *drainState) rotate() {
	atomic.StoreInt64(&d.prevDrain, atomic.SwapInt64(&d.curDrain, 0))
	atomic.StoreInt64(&d.prevLag, atomic.SwapInt64(&d.curLag, 0))
}

// recent returns, at now, the longest Drain call and the longest lag of
// the current and the previous interval, counting a Drain call still
// running and a lag still going on.
func (d *drainState) recent(now int64) (drain, lag time.Duration) {
	dr := max(atomic.LoadInt64(&d.curDrain), atomic.LoadInt64(&d.prevDrain))
	if s := atomic.LoadInt64(&d.start); s != 0 {
		dr = max(dr, now-s)
	}
	lg := max(atomic.LoadInt64(&d.curLag), atomic.LoadInt64(&d.prevLag))
	if b := atomic.LoadInt64(&d.behind); b != 0 {
		lg = max(lg, now-b)
	}
	return time.Duration(max(dr, 0)), time.Duration(max(lg, 0))
}

// raise stores v in *p if it is larger. Only one worker writes a shard's
// record, but the monitor's rotation may clear it in between: a lost
// raise then shows in the next interval's maximum or not at all, which a
// recent maximum allows.
func raise(p *int64, v int64) {
	if v > atomic.LoadInt64(p) {
		atomic.StoreInt64(p, v)
	}
}
