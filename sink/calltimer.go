package sink

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/internal/sinkhook"
)

// A callTimer times a Drain call's calls into its destination (a Write, an
// export, a publish), so that the sink tells a slow destination from a
// worker short of CPU; this repository's front-ends reach it through
// sinkhook.CallsOf. Without one, the sink judges the destination by the
// Drain calls. But a worker preempted between two writes waits in the run
// queue too (up to the runtime's 10 ms slice for each goroutine ahead of
// it, while producers keep every core busy), and its Drain call then
// passes SlowDrain with a destination that keeps up. Once a worker has
// called Begin, the sink judges by the calls instead, every worker's, as
// calls into one destination (drainstate.go: the pace). An Action that
// does more than a little CPU work of its own outside its calls, or whose
// shards write to destinations of their own, should not time them.
//
// What no timing tells apart is a call whose system call returned while
// the worker waits for a processor to run again: it reads as slow until
// the worker runs. Every method of a nil *callTimer does nothing.
type callTimer struct {
	d     *drainState // the worker's home shard's
	timed *int32      // the sink's (Sink.timed)
	epoch time.Time   // the sink's (Sink.now)
}

// callTimerKey is the ctx key of a worker's callTimer.
type callTimerKey struct{}

// callTimerOf returns the callTimer of the Drain call whose ctx is ctx
// (or derives from it), nil when ctx is not a Drain call's.
func callTimerOf(ctx context.Context) *callTimer {
	t, _ := ctx.Value(callTimerKey{}).(*callTimer)
	return t
}

// Begin records that a call into the destination begins now.
func (t *callTimer) Begin() {
	if t != nil {
		if atomic.LoadInt32(t.timed) == 0 {
			atomic.StoreInt32(t.timed, 1)
		}
		t.d.callBegan(sinceEpoch(t.epoch))
	}
}

// End records that the call into the destination begun last has
// returned. A Drain call that returns between a Begin and its End ends
// the call then.
func (t *callTimer) End() {
	if t != nil {
		t.d.callEnded(sinceEpoch(t.epoch))
	}
}

// The hooks of internal/sinkhook, for this repository's front-ends.
func init() {
	sinkhook.CallsOf = func(ctx context.Context) (sinkhook.Calls, bool) {
		t := callTimerOf(ctx)
		return t, t != nil
	}
	sinkhook.ShardOf = func(h any) sinkhook.Shard {
		return h.(interface{ hooks() sinkhook.Shard }).hooks()
	}
}
