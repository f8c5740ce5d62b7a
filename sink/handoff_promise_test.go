package sink_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/sinkhook"
	"github.com/shardedsink/shardedsink/sink"
)

// The sink's one promise (handoff.go, "What a push waits for"): a push
// never waits on a destination, however slow. A destination slower than
// the pushes whose every call stays well under SlowDrain (here 2 ms a
// call, off the CPU) fills the ring, and the pushes into it shed at once
// once a Drain call has shown the destination's pace: no push parks, none
// takes any time. (Before the first call ends, a push may wait until it
// has run FastCall.) This is the case that parked pushes for up to a
// second before the destination's pace was read (mayPark returning
// true fails it: hand-offs, and pushes that waited a whole call).
func TestASlowDestinationParksNoPush(t *testing.T) {
	for _, per := range []time.Duration{2 * sink.FastCall, 2 * time.Millisecond, 9 * time.Millisecond} {
		t.Run(per.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := testCfg(1, 8, 4)
				cfg.HandOffWait = time.Second
				s, err := sink.New(cfg, sink.ActionFunc[ev](func(context.Context, []ev) { time.Sleep(per) }))
				require.NoError(t, err)
				h := s.Handle()
				require.True(t, h.Push(ev{-1}))
				time.Sleep(2 * per) // the first Drain call has shown the pace
				var waited time.Duration
				for i := range 400 {
					t0 := time.Now()
					h.Push(ev{i})
					waited = max(waited, time.Since(t0))
					if i%4 == 3 {
						time.Sleep(per / 4) // offered: four times what the Drain takes
					}
				}
				require.NoError(t, s.Shutdown(context.Background()))
				st := s.Stats()
				require.Zero(t, st.HandOffs, "pushes parked on a slow destination: %+v", st)
				require.Zero(t, waited, "a push waited on a slow destination")
				require.Positive(t, st.Dropped, "the destination kept up: the test shows nothing")
			})
		})
	}
}

// DropOldest never parks: a push into a full ring displaces its oldest
// value at once, whatever the worker is doing (here a young Drain call
// of a destination whose pace is not known yet, in which a DropNewest
// push parks).
func TestADropOldestPushNeverParks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testCfg(1, 4, 1)
		cfg.HandOffWait = time.Second
		cfg.Overflow = sink.DropOldest
		s, h, g := fullBehindADrain(t, cfg)
		t0 := time.Now()
		require.True(t, h.Push(ev{5}), "DropOldest refused a push")
		require.Zero(t, time.Since(t0), "a DropOldest push waited")
		st := s.Stats()
		require.Equal(t, uint64(1), st.Displaced)
		require.Zero(t, st.HandOffs, "a DropOldest push parked")
		g.release()
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

// paced is an Action that times each Drain call as a call into the
// destination: -1 takes a millisecond (a slow call), 100 waits for hold
// (a call that stalls), 50 makes no call into the destination (as a
// batching Action's Drain often does), the rest return at once.
type paced struct {
	collector[ev]
	hold chan struct{}
}

func (a *paced) Drain(ctx context.Context, batch []ev) {
	if batch[0].id == 50 {
		a.collector.Drain(ctx, batch)
		return
	}
	calls, _ := sinkhook.CallsOf(ctx)
	calls.Begin()
	switch batch[0].id {
	case -1:
		time.Sleep(time.Millisecond)
	case 100:
		<-a.hold
	}
	calls.End()
	a.collector.Drain(ctx, batch)
}

// With timed calls (sinkhook.CallsOf) the workers' calls go to one destination, whose pace
// is the shortest that any worker saw: one slow call of another shard's
// worker does not make a push into this shard's full ring shed while its
// own calls are quick. The push parks, as behind a destination that keeps
// up, until the call in progress passes SlowDrain. (Judged by every
// shard's pace alone, as first written, the push shed at once.)
func TestTheDestinationsPaceIsTheShortestAnyWorkerSaw(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testCfg(2, 4, 1)
		cfg.HandOffWait = time.Second
		a := &paced{hold: make(chan struct{})}
		s, err := sink.New(cfg, a)
		require.NoError(t, err)
		h0 := s.HandleFor(0)
		h1 := h0
		for k := uint64(1); h1.Shard() == h0.Shard(); k++ {
			h1 = s.HandleFor(k)
		}
		require.True(t, h0.Push(ev{-1})) // a slow call on one worker
		time.Sleep(2 * time.Millisecond)
		require.True(t, h1.Push(ev{1})) // a quick one on the other
		synctest.Wait()
		require.True(t, h1.Push(ev{100})) // the call that stalls
		synctest.Wait()
		for i := range 4 {
			require.True(t, h1.Push(ev{2 + i}))
		}
		t0 := time.Now()
		require.False(t, h1.Push(ev{6}))
		waited := time.Since(t0)
		require.Greater(t, waited, time.Duration(0), "a push behind a destination that keeps up did not park")
		require.LessOrEqual(t, waited, sink.SlowDrain+time.Millisecond)
		close(a.hold)
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

// A timed Drain call that makes no call into the destination (an Action
// that batches, as otelsink's does between its exports) says nothing of
// the destination's pace: behind a destination whose only calls are slow,
// a push into a full ring sheds at once, however many such Drain calls
// came between. (Counted as calls of no length, they made the pace fast,
// and the push parked until the stalled call passed SlowDrain.)
func TestDrainCallsWithoutACallIntoTheDestinationDoNotSetThePace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testCfg(1, 4, 1)
		cfg.HandOffWait = time.Second
		a := &paced{hold: make(chan struct{})}
		s, err := sink.New(cfg, a)
		require.NoError(t, err)
		h := s.Handle()
		require.True(t, h.Push(ev{-1})) // the one call into the destination: slow
		time.Sleep(2 * time.Millisecond)
		for range 2 * sink.PaceRound {
			require.True(t, h.Push(ev{50})) // Drain calls that make none
			synctest.Wait()
		}
		require.True(t, h.Push(ev{100})) // the call that stalls
		synctest.Wait()
		for i := range 4 {
			require.True(t, h.Push(ev{2 + i}))
		}
		t0 := time.Now()
		require.False(t, h.Push(ev{6}))
		require.Zero(t, time.Since(t0), "a push behind a slow destination parked")
		require.Zero(t, s.Stats().HandOffs)
		close(a.hold)
		require.NoError(t, s.Shutdown(context.Background()))
	})
}
