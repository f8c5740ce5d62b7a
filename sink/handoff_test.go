package sink_test

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/sink"
)

// starve pushes each values from each of producers goroutines, each on a
// locked OS thread, as fast as they can, into a sink of cfg whose Drain
// returns at once, and returns its Stats after Shutdown and the longest
// push: producers that outnumber the cores by far and never block, the
// load in which a worker gets too little CPU.
func starve(t testing.TB, cfg sink.Config[int], producers, each int) (sink.Stats, time.Duration) {
	t.Helper()
	cfg.Logger = quiet
	s, err := sink.New(cfg, sink.ActionFunc[int](func(context.Context, []int) {}))
	require.NoError(t, err)
	longest := make([]time.Duration, producers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for p := range producers {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			<-start
			for i := range each {
				t0 := time.Now()
				s.Push(p*each + i)
				longest[p] = max(longest[p], time.Since(t0))
			}
		})
	}
	close(start)
	wg.Wait()
	require.NoError(t, s.Shutdown(context.Background()))
	return s.Stats(), slices.Max(longest)
}

// 256 producers on locked threads push into a sink whose Drain returns
// at once, default but for a longer HandOffWait (below): no push is
// refused. Without the hand-off
// (DisableHandOff) the workers barely run and most pushes are shed, which
// the log shows (2 cores: about 90 % of them).
func TestAStarvedWorkerLosesNothingWithTheHandOff(t *testing.T) {
	producers, each := 256, 2000
	if testing.Short() {
		producers, each = 64, 1000
	}
	// The default HandOffWait passes alone: 0 refused in 10 of 10 runs on
	// a 2-core VM. Stretched here by ten, and by ten again under the race
	// detector: go test runs packages side by side, and in .ci/run mpmc's
	// locked-thread stress tests kept these workers from their rings for
	// up to 238 ms, which no shorter wait rides out.
	st, _ := starve(t, sink.Config[int]{HandOffWait: raceSlowdown * 10 * sink.DefaultHandOffWait}, producers, each)
	require.Zero(t, st.Dropped, "pushes refused with the hand-off: %+v", st)
	require.Equal(t, uint64(producers*each), st.Drained)
	off, _ := starve(t, sink.Config[int]{DisableHandOff: true}, producers, each)
	t.Logf("with the hand-off: 0 dropped, %d pushes parked; without: %d of %d dropped", st.HandOffs, off.Dropped, producers*each)
}

// fullBehindADrain returns a sink of cfg (one shard, a ring of 4, one
// value a batch) whose worker is in a Drain call held by the returned gate
// and whose ring is full: the next push into it finds no room. The
// destination kept up before that call: one quick call (of ev -1) has
// shown its pace, so that the sink reads the full ring as a worker short
// of CPU.
func fullBehindADrain(t *testing.T, cfg sink.Config[ev]) (*sink.Sink[ev], *sink.Handle[ev], *gate[ev]) {
	t.Helper()
	g := newGate[ev]()
	g.quick.Store(1)
	s, err := sink.New(cfg, g)
	require.NoError(t, err)
	h := s.Handle()
	require.True(t, h.Push(ev{-1}))
	for s.Stats().Drained == 0 {
		time.Sleep(time.Microsecond)
	}
	require.True(t, h.Push(ev{0}))
	g.waitEntered(t)
	for i := range 4 {
		require.True(t, h.Push(ev{i + 1}))
	}
	return s, h, g
}

// A push into a full ring whose Drain call has run longer than SlowDrain
// sheds at once; one that came while the call was younger waits until it
// passes SlowDrain, and then sheds.
func TestAPushIntoAStalledDrainShedsAfterSlowDrainAtMost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testCfg(1, 4, 1)
		cfg.HandOffWait = time.Second
		s, h, g := fullBehindADrain(t, cfg)
		t0 := time.Now()
		require.False(t, h.Push(ev{5}), "a push into a full ring of a stalled Drain went in")
		waited := time.Since(t0)
		require.Greater(t, waited, time.Duration(0), "a push as the Drain call began did not hand off")
		require.LessOrEqual(t, waited, sink.SlowDrain+time.Millisecond)
		t0 = time.Now()
		require.False(t, h.Push(ev{6}))
		require.Zero(t, time.Since(t0), "a push into a full ring of a slow Drain waited")
		st := s.Stats()
		require.Equal(t, uint64(2), st.Dropped)
		require.Equal(t, uint64(1), st.HandOffs)
		require.GreaterOrEqual(t, st.MaxDrainTime, sink.SlowDrain, "the Drain call in progress counts")
		g.release()
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

// stepper is an Action whose Drain calls each wait for a token of step
// (or the end of ctx) before they take their batch.
type stepper struct {
	collector[ev]
	step chan struct{}
}

func (a *stepper) Drain(ctx context.Context, batch []ev) {
	select {
	case <-a.step:
	case <-ctx.Done():
	}
	a.collector.Drain(ctx, batch)
}

// After a Drain call that ran longer than HandOffStall (a stall of the
// destination), and once the destination's pace is fast again (PaceRound
// to twice that many quick calls since), a push into a full ring waits
// at most HandOffRecoveringCap in all, although the Drain call in progress
// is younger than SlowDrain: the destination has just been slow. After a
// call that passed SlowDrain but not HandOffStall (which a worker short
// of CPU can make) there is no cap: the push waits until the call in
// progress passes SlowDrain. Before the quick calls, the recent calls
// say the destination is slow, and the push sheds at once.
func TestAfterAStallAPushWaitsNoLongerThanTheRecoveringCap(t *testing.T) {
	for _, c := range []struct {
		name   string
		before time.Duration // the Drain call before the quick ones
		quick  int           // quick Drain calls between it and the one in progress
		capped bool
	}{
		{"after a stall", sink.HandOffStall + time.Millisecond, 2 * sink.PaceRound, true},
		{"after a slow call", sink.SlowDrain + time.Millisecond, 2 * sink.PaceRound, false},
		{"right after a stall", sink.HandOffStall + time.Millisecond, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := testCfg(1, 4, 1)
				cfg.HandOffWait = time.Second
				a := &stepper{step: make(chan struct{})}
				s, err := sink.New(cfg, a)
				require.NoError(t, err)
				h := s.Handle()
				require.True(t, h.Push(ev{0}))
				synctest.Wait() // the worker is in a Drain call of ev 0
				time.Sleep(c.before)
				a.step <- struct{}{} // that call returns
				synctest.Wait()
				for i := range c.quick {
					require.True(t, h.Push(ev{100 + i}))
					synctest.Wait()
					a.step <- struct{}{} // a quick call
					synctest.Wait()
				}
				require.True(t, h.Push(ev{1}))
				synctest.Wait() // the worker is in a young Drain call of ev 1
				for i := range 4 {
					require.True(t, h.Push(ev{i + 2}))
				}
				t0 := time.Now()
				require.False(t, h.Push(ev{6}), "a push into a full ring went in")
				waited := time.Since(t0)
				switch {
				case c.quick == 0:
					require.Zero(t, waited, "a push parked although the recent calls were slow")
				case c.capped:
					require.Greater(t, waited, time.Duration(0), "the push did not hand off")
					require.LessOrEqual(t, waited, sink.HandOffRecoveringCap+time.Millisecond, "after a stall a push waited past the cap")
					require.Less(t, waited, sink.SlowDrain, "after a stall a push waited until the young Drain call turned slow")
				default:
					require.GreaterOrEqual(t, waited, sink.SlowDrain, "after a call short of a stall a push was capped")
				}
				close(a.step)
				require.NoError(t, s.Shutdown(context.Background()))
				st := s.Stats()
				require.Equal(t, uint64(1), st.Dropped)
				require.Equal(t, uint64(6+c.quick), st.Drained)
			})
		})
	}
}

// A push parked on a worker short of CPU goes in once the worker takes
// values: the wake-up comes from the take, not from the timer.
func TestAParkedPushGoesInWhenTheWorkerTakes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h, g := fullBehindADrain(t, testCfg(1, 4, 4))
		pushed := make(chan bool)
		go func() { pushed <- h.Push(ev{5}) }()
		synctest.Wait() // parked: the Drain call is younger than SlowDrain
		g.release()     // the worker returns and takes the four
		require.True(t, <-pushed)
		require.Zero(t, s.Stats().Dropped)
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

// Shutdown ends a park at once: the push is dropped after shutdown.
func TestShutdownEndsAParkedPush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testCfg(1, 4, 1)
		cfg.HandOffWait = time.Hour
		s, h, g := fullBehindADrain(t, cfg)
		pushed := make(chan bool)
		go func() { pushed <- h.Push(ev{5}) }()
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		_ = s.Shutdown(ctx) // the Drain is held: cut short by ctx
		require.False(t, <-pushed)
		require.Equal(t, uint64(1), s.Stats().DroppedAfterShutdown)
		g.release()
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

// A push that parks wakes a polling worker from its sleep: with IdlePoll
// and an IdleSleep of an hour, a push into the full ring goes in as soon
// as the worker, woken, has taken values, instead of waiting HandOffWait
// and being shed.
func TestAParkedPushWakesAPollingWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := sink.New(sink.Config[int]{Shards: 1, RingCapacity: 2, BatchSize: 1, Logger: quiet,
			Idle: sink.IdlePoll, IdleSleep: time.Hour}, sink.ActionFunc[int](func(context.Context, []int) {}))
		require.NoError(t, err)
		defer func() { require.NoError(t, s.Shutdown(context.Background())) }()
		synctest.Wait() // the worker is asleep for its hour
		start := time.Now()
		for i := range 5 {
			require.True(t, s.Push(i), "push %d", i)
		}
		require.Less(t, time.Since(start), sink.DefaultHandOffWait, "the pushes waited for the poll")
		require.Positive(t, s.Stats().HandOffs)
	})
}
