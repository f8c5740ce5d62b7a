package sink

import (
	"context"
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
// up. Once a Drain call has called Begin on its timer, the shard judges
// by the calls instead: a push sheds once the call into the destination in
// progress has run longer than SlowDrain, and parks (see
// [Config.HandOffWait]) while the worker is merely between calls. An
// Action that does more than a little CPU work of its own outside its
// calls should not time them: that work, slow or not, then never makes a
// push shed, and the pushes wait for the hand-off's bound instead.
//
// Get it with [CallTimerOf] from the Drain call's ctx; call Begin just
// before the call into the destination (before waiting for a lock that
// guards it, too: waiting for another worker's write is waiting for the
// destination) and End just after it returns, on the goroutine of the
// Drain call, and not across Drain calls. Each is one clock read and an
// atomic store or two. Every method of a nil *CallTimer does nothing.
type CallTimer struct {
	d     *drainState // the worker's home shard's
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
