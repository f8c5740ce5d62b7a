package sink

import (
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/internal/layout"
)

// drainState is what a shard's home worker records about its Drain calls
// and its backlog: whether a Drain call is running (the hand-off's test of
// a slow destination), and two recent maxima that tell a slow destination
// from a worker short of CPU (Stats.MaxDrainTime and Stats.MaxTakeLag, the
// overload report). One per shard, on cache lines of its own: the worker
// writes it twice per Drain call, pushes read it only when their ring
// refused them, Stats and the monitor when they run. Every field is a plain
// int64 used through sync/atomic's functions; times are Sink.now's.
type drainState struct {
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
	// slowEnd is when the last Drain call that ran longer than SlowDrain
	// ended, 0 before the first: the hand-off's fair mode follows it.
	// stallEnd is the same for a call longer than handOffStall: the
	// hand-off's wait cap follows it.
	slowEnd, stallEnd int64
	_                 [layout.CacheLine - 8*8]byte
}

// drainBegan records the start of a Drain call at now.
func (d *drainState) drainBegan(now int64) { atomic.StoreInt64(&d.start, now) }

// drainEnded records the end, at now, of the Drain call that began at
// start.
func (d *drainState) drainEnded(start, now int64) {
	atomic.StoreInt64(&d.start, 0)
	if now-start > int64(SlowDrain) {
		atomic.StoreInt64(&d.slowEnd, now)
	}
	if now-start > int64(handOffStall) {
		atomic.StoreInt64(&d.stallEnd, now)
	}
	raise(&d.curDrain, now-start)
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
