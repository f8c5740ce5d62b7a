package sink

import (
	"context"
	"sync/atomic"
	"time"
)

// A CallTimer times a Drain call's calls into its destination (a Write, an
// export, a publish), so that the sink tells a slow destination from a
// worker short of CPU. Without one, the sink judges the destination by
// the Drain calls: a push into a full ring sheds once a Drain call of its
// shard has run longer than [SlowDrain]. But a worker preempted between
// two writes waits in the run queue too (up to the runtime's 10 ms slice
// for each goroutine ahead of it, while producers keep every core busy),
// and its Drain call then passes SlowDrain with a destination that keeps
// up. Once a worker has called Begin, the sink judges by the calls
// instead, every worker's, as calls into one destination: a push sheds
// once some worker's call into the destination has run longer than
// SlowDrain, and parks (see [Config.HandOffWait]) while none has. An
// Action that does more than a little CPU work of its own outside its
// calls, or whose shards write to destinations of their own, should not
// time them: that work, slow or not, then never makes a push shed, and
// the pushes wait for the hand-off's bound instead.
//
// Get it with [CallTimerOf] from the Drain call's ctx; call Begin just
// before the call into the destination and End just after it returns, on
// the goroutine of the Drain call, and not across Drain calls. Leave out
// a wait for a lock that another worker holds around its own call: that
// call's timing covers it, and a holder that is merely preempted should
// not make pushes shed. Each is one clock read and an atomic store or
// two. Every method of a nil *CallTimer does nothing.
//
// What no timing tells apart is a call whose system call returned while
// the worker waits for a processor to run again: it reads as slow until
// the worker runs.
type CallTimer struct {
	d     *drainState // the worker's home shard's
	timed *int32      // the sink's (Sink.timed)
	epoch time.Time   // the sink's (Sink.now)
}

// callTimerKey is the ctx key of a worker's CallTimer.
type callTimerKey struct{}

// CallTimerOf returns the CallTimer of the Drain call whose ctx is ctx (or
// derives from it), nil when ctx is not a Drain call's.
func CallTimerOf(ctx context.Context) *CallTimer {
	t, _ := ctx.Value(callTimerKey{}).(*CallTimer)
	return t
}

// Begin records that a call into the destination begins now.
func (t *CallTimer) Begin() {
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
func (t *CallTimer) End() {
	if t != nil {
		t.d.callEnded(sinceEpoch(t.epoch))
	}
}
