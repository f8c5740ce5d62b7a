package sink_test

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/sinkhook"
	"github.com/shardedsink/shardedsink/sink"
)

// fullInACall returns, inside a synctest bubble, a sink of a (one shard,
// a ring of 4, one value a batch, a HandOffWait of a second) whose worker
// is blocked in the Drain call of its first value and whose ring is full.
func fullInACall(t *testing.T, a sink.Action[ev]) (*sink.Sink[ev], *sink.Handle[ev]) {
	t.Helper()
	cfg := testCfg(1, 4, 1)
	cfg.HandOffWait = time.Second
	s, err := sink.New(cfg, a)
	require.NoError(t, err)
	h := s.Handle()
	require.True(t, h.Push(ev{0}))
	synctest.Wait()
	for i := range 4 {
		require.True(t, h.Push(ev{i + 1}))
	}
	return s, h
}

// betweenCalls is an Action whose Drain calls make a call into the
// destination (timed when timed is set), then wait for a token of step
// outside any call, as a worker that lacks CPU between two Writes waits
// in the run queue, and then make another call.
type betweenCalls struct {
	collector[ev]
	timed bool
	step  chan struct{}
}

func (a *betweenCalls) Drain(ctx context.Context, batch []ev) {
	calls, _ := sinkhook.CallsOf(ctx)
	if !a.timed {
		calls, _ = sinkhook.CallsOf(context.Background()) // times nothing
	}
	calls.Begin()
	calls.End()
	select {
	case <-a.step:
	case <-ctx.Done():
	}
	calls.Begin()
	a.collector.Drain(ctx, batch)
	calls.End()
}

// A Drain call that runs long between its calls into the destination,
// all of them quick, does not make pushes shed once it times them: a push
// into the full ring parks past SlowDrain and goes in when the worker
// takes. The same Drain untimed is judged by the Drain call, and the push
// sheds at SlowDrain.
func TestATimedDrainLongBetweenCallsDoesNotMakePushesShed(t *testing.T) {
	for _, timed := range []bool{true, false} {
		name := map[bool]string{true: "timed", false: "untimed"}[timed]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := &betweenCalls{timed: timed, step: make(chan struct{})}
				s, h := fullInACall(t, a) // between the calls of ev 0
				go func() {
					time.Sleep(3 * sink.SlowDrain)
					close(a.step) // the worker runs again
				}()
				t0 := time.Now()
				in := h.Push(ev{5})
				waited := time.Since(t0)
				if timed {
					require.True(t, in, "a push into a full ring of a timed Drain between quick calls was shed")
					require.Equal(t, 3*sink.SlowDrain, waited, "the push did not wait for the worker's take")
				} else {
					require.False(t, in, "a push into a full ring of an untimed Drain older than SlowDrain went in")
					require.LessOrEqual(t, waited, sink.SlowDrain+time.Microsecond)
				}
				require.NoError(t, s.Shutdown(context.Background()))
				st := s.Stats()
				require.Equal(t, map[bool]uint64{true: 0, false: 1}[timed], st.Dropped)
				require.Equal(t, uint64(6)-st.Dropped, st.Drained)
				require.GreaterOrEqual(t, st.MaxDrainTime, 3*sink.SlowDrain, "MaxDrainTime is the Drain call's, timed or not")
			})
		})
	}
}

// stalledCall is an Action whose Drain calls make one timed call into the
// destination that waits for a token of step: a destination that stalls.
type stalledCall struct {
	collector[ev]
	step chan struct{}
}

func (a *stalledCall) Drain(ctx context.Context, batch []ev) {
	calls, _ := sinkhook.CallsOf(ctx)
	calls.Begin()
	defer calls.End()
	select {
	case <-a.step:
	case <-ctx.Done():
	}
	a.collector.Drain(ctx, batch)
}

// A timed call into the destination that stalls makes pushes shed as a
// stalled Drain call does: before the first call ends the destination's
// pace is not known, and a push sheds at once rather than wait for it. Once the
// stalled call returns (after more than HandOffStall), the destination's
// pace is slow, and a push sheds within the window's cap.
func TestATimedCallThatStallsMakesPushesShed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &stalledCall{step: make(chan struct{})}
		s, h := fullInACall(t, a) // in the call of ev 0
		t0 := time.Now()
		require.False(t, h.Push(ev{5}), "a push into a full ring of a stalled call went in")
		require.Zero(t, time.Since(t0), "before the first call ends, a push does not wait for the call in progress")
		t0 = time.Now()
		require.False(t, h.Push(ev{6}))
		require.Zero(t, time.Since(t0), "a push into a full ring of a stalled call waited")
		time.Sleep(sink.HandOffStall)
		a.step <- struct{}{} // the stall ends: ev 0 drained
		synctest.Wait()      // the worker is in the call of ev 1
		require.True(t, h.Push(ev{7}))
		t0 = time.Now()
		require.False(t, h.Push(ev{8}), "a push into a full ring went in")
		require.LessOrEqual(t, time.Since(t0), sink.HandOffRecoveringCap+time.Millisecond, "after a stalled call a push waited past the cap")
		close(a.step)
		require.NoError(t, s.Shutdown(context.Background()))
		st := s.Stats()
		require.Equal(t, uint64(3), st.Dropped)
		require.Equal(t, uint64(6), st.Drained)
	})
}

// A ctx that is not a Drain call's has no Calls, and a nil one does
// nothing; every Drain call's has one, the final drain's too.
func TestCallsOf(t *testing.T) {
	none, ok := sinkhook.CallsOf(context.Background())
	require.False(t, ok)
	none.Begin()
	none.End()
	seen := make(chan bool, 16)
	s, err := sink.New(testCfg(1, 16, 16), sink.ActionFunc[ev](func(ctx context.Context, batch []ev) {
		_, ok := sinkhook.CallsOf(ctx)
		seen <- ok
	}))
	require.NoError(t, err)
	h := s.Handle()
	require.True(t, h.Push(ev{1}))
	require.NoError(t, s.Flush(context.Background()))
	require.True(t, <-seen, "a Drain call's ctx has no Calls")
	require.True(t, h.Push(ev{2}))
	require.NoError(t, s.Shutdown(context.Background()))
	for len(seen) > 0 {
		require.True(t, <-seen, "a Drain call's ctx has no Calls")
	}
}

// HandOffState sees a push parked on its shard while it is, and none
// once it got in; the queue is not fair without a slow Drain call, and a
// sink without a spill tier does not spill.
func TestHandOffStateSeesAParkedPush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &betweenCalls{timed: true, step: make(chan struct{})}
		s, h := fullInACall(t, a)
		parked, spilling, fair := sinkhook.ShardOf(h).HandOffState()
		require.False(t, parked, "a push parked before any did")
		require.False(t, spilling, "a sink without a spill tier spills")
		require.False(t, fair)
		in := make(chan bool)
		go func() { in <- h.Push(ev{5}) }()
		synctest.Wait()
		parked, spilling, fair = sinkhook.ShardOf(h).HandOffState()
		require.True(t, parked, "the push parked on the full ring is not seen")
		require.False(t, spilling, "a sink without a spill tier spills")
		require.False(t, fair, "the queue is fair without a slow Drain call")
		close(a.step) // the worker takes, and the push gets in
		require.True(t, <-in)
		parked, _, _ = sinkhook.ShardOf(h).HandOffState()
		require.False(t, parked, "a push that got in is still seen parked")
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

// returnedCall is an Action whose Drain call, when armed, makes a call into
// the destination that runs past SlowDrain and then, before the call
// ends, yields the processor as a Write does whose system call returned to
// find its processor taken: the worker waits in the global run queue. It
// sends how long it waited there.
type returnedCall struct {
	arm    chan struct{}
	delays chan time.Duration
	calls  atomic.Int64 // Drain calls so far
}

func (a *returnedCall) Drain(ctx context.Context, batch []ev) {
	a.calls.Add(1)
	calls, _ := sinkhook.CallsOf(ctx)
	calls.Begin()
	select {
	case <-a.arm:
		time.Sleep(sink.SlowDrain + time.Millisecond) // pushes shed from now on
		t0 := time.Now()
		runtime.Gosched()
		a.delays <- time.Since(t0)
	default:
	}
	calls.End()
}

// Pushes that shed because a call into the destination has run past
// SlowDrain yield while that call is young, so that a worker whose call
// returned and waits for a processor gets one and ends it. Without the
// yields, pushes that shed never schedule, and the worker waited for the
// preemptions of every goroutine ahead of it (hundreds of milliseconds
// with 32 producers on 2 Ps).
func TestPushesThatShedYieldToACallThatReturned(t *testing.T) {
	a := &returnedCall{arm: make(chan struct{}, 1), delays: make(chan time.Duration, 1)}
	s, err := sink.New(testCfg(1, 64, 8), sink.Action[ev](a))
	require.NoError(t, err)
	var stop atomic.Bool
	var wg sync.WaitGroup
	h := s.Handle()
	for range 32 {
		wg.Go(func() {
			for !stop.Load() {
				h.Push(ev{1})
			}
		})
	}
	const trials = 5
	delays := make([]time.Duration, trials)
	for i := range delays {
		// The destination keeps up between the armed calls: enough quick
		// calls that its pace is fast again (pushes yield only then).
		for n := a.calls.Load(); a.calls.Load() < n+2*sink.PaceRound; {
			time.Sleep(100 * time.Microsecond)
		}
		a.arm <- struct{}{}
		delays[i] = <-a.delays
	}
	stop.Store(true)
	wg.Wait()
	require.NoError(t, s.Shutdown(context.Background()))
	slices.Sort(delays)
	t.Logf("the worker's waits for a processor: %v", delays)
	if median := delays[trials/2]; median > sink.SlowDrain/2 {
		t.Fatalf("the worker waited %v (median; all: %v) for a processor while pushes shed", median, delays)
	}
}
