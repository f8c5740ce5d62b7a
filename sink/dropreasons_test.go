package sink_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/allocs"
	"github.com/shardedsink/shardedsink/sink"
)

// reasons is the part of Stats that says why values were dropped.
type reasons struct {
	dropped, full, forBytes, waitedOut, afterShutdown, displaced uint64
}

// reasonsOf reads the reasons from a snapshot.
func reasonsOf(st sink.Stats) reasons {
	return reasons{
		dropped:       st.Dropped,
		full:          st.DroppedForSlots(),
		forBytes:      st.DroppedForBytes,
		waitedOut:     st.WaitedOut,
		afterShutdown: st.DroppedAfterShutdown,
		displaced:     st.Displaced,
	}
}

// Every drop is counted under exactly one reason: a ring full in slots
// (what the four counted reasons leave of Dropped), the byte budget, a
// PushWait whose ctx ended, a push after Shutdown began, or a value
// displaced under DropOldest; under both policies, with and without a byte
// budget, and the per-shard counters sum to the totals.
func TestEveryDropIsCountedUnderOneReason(t *testing.T) {
	for _, o := range []sink.Overflow{sink.DropNewest, sink.DropOldest} {
		for _, budget := range []bool{false, true} {
			name := o.String()
			if budget {
				name += "/MaxQueuedBytes"
			}
			t.Run(name, func(t *testing.T) {
				g := newGate[ev]()
				cfg := testCfg(1, 4, 1)
				cfg.Overflow = o
				if budget {
					// A value's size is its id: ev{1000} never fits
					// beside another value.
					cfg.SizeOf = func(e ev) int { return e.id }
					cfg.MaxQueuedBytes = 500
				}
				s, err := sink.New(cfg, g)
				require.NoError(t, err)
				h := s.Handle()
				require.True(t, h.Push(ev{1}))
				g.waitEntered(t) // the worker holds ev{1} in Drain
				for i := 2; i <= 5; i++ {
					require.True(t, h.Push(ev{i}), "push %d", i)
				}
				var want reasons
				for i := 6; i <= 8; i++ { // the ring is full
					if o == sink.DropOldest {
						require.True(t, h.Push(ev{i}), "push %d displaces", i)
						want.displaced++
					} else {
						require.False(t, h.Push(ev{i}), "push %d", i)
						want.full++
					}
				}
				if budget {
					require.False(t, h.Push(ev{1000}), "a value above the share's room")
					want.forBytes++
				}
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				require.ErrorIs(t, h.PushWait(ctx, ev{9}), context.Canceled)
				want.waitedOut++
				want.dropped = want.full + want.forBytes + want.waitedOut + want.displaced
				require.Equal(t, want, reasonsOf(s.Stats()), "before Shutdown")

				g.release()
				require.NoError(t, s.Shutdown(context.Background()))
				require.False(t, h.Push(ev{10}))
				require.False(t, s.Push(ev{11}))
				require.False(t, s.HandleFor(12).Push(ev{12}))
				require.ErrorIs(t, h.PushWait(context.Background(), ev{13}), sink.ErrShutdown)
				require.ErrorIs(t, s.PushWait(context.Background(), ev{14}), sink.ErrShutdown)
				want.afterShutdown += 5
				if budget {
					require.False(t, h.Push(ev{1000}), "a value above the share, after Shutdown")
					want.afterShutdown++
				}
				want.dropped = want.full + want.forBytes + want.waitedOut + want.displaced + want.afterShutdown
				st := s.Stats()
				require.Equal(t, want, reasonsOf(st), "after Shutdown")
				var sum reasons
				for _, ss := range st.PerShard {
					sum.dropped += ss.Dropped
					sum.forBytes += ss.DroppedForBytes
					sum.waitedOut += ss.WaitedOut
					sum.afterShutdown += ss.DroppedAfterShutdown
					sum.displaced += ss.Displaced
					sum.full += ss.DroppedForSlots()
				}
				require.Equal(t, want, sum, "the shards' sum")
			})
		}
	}
}

// A PushWait parked for room when Shutdown begins returns ErrShutdown, and
// its value counts as dropped after shutdown, not as waited out.
func TestPushWaitParkedAtShutdownCountsAsAfterShutdown(t *testing.T) {
	g := newGate[ev]()
	s, err := sink.New(testCfg(1, 2, 1), g)
	require.NoError(t, err)
	h := s.Handle()
	require.True(t, h.Push(ev{0}))
	g.waitEntered(t)
	require.True(t, h.Push(ev{1}))
	require.True(t, h.Push(ev{2}))
	parked := make(chan error, 1)
	go func() { parked <- h.PushWait(context.Background(), ev{3}) }()
	eventually(t, func() bool { return s.Stats().Waiting == 1 }, "the PushWait parked")
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	select {
	case err := <-parked:
		require.ErrorIs(t, err, sink.ErrShutdown)
	case <-time.After(10 * time.Second):
		t.Fatal("the parked PushWait did not return when Shutdown began")
	}
	g.release()
	require.NoError(t, <-shut)
	st := s.Stats()
	require.Equal(t, uint64(1), st.DroppedAfterShutdown)
	require.Equal(t, uint64(1), st.Dropped)
	require.Zero(t, st.WaitedOut)
	require.Zero(t, st.Waiting)
}

// ReadStats fills the same snapshot as Stats and, given a Stats whose
// PerShard has room, allocates nothing; it overwrites what was there.
func TestReadStatsReusesItsSliceAndMatchesStats(t *testing.T) {
	g := newGate[ev]()
	s := newSink(t, testCfg(4, 8, 1), g)
	t.Cleanup(g.release)
	h := s.Handle()
	for i := range 12 {
		h.Push(ev{i}) // one into Drain, 8 queued, 3 dropped
	}
	g.waitEntered(t)
	eventually(t, func() bool { return s.Stats().Drained == 1 }, "the worker took one")
	st := sink.Stats{Name: "stale", Dropped: 1 << 40, PerShard: make([]sink.ShardStats, 1, 8)}
	st.PerShard[0].Queued = -1
	s.ReadStats(&st)
	later := s.Stats()
	// The Drain call in progress counts in MaxDrainTime, which grows
	// between the two reads: the clocks are compared apart.
	require.LessOrEqual(t, st.MaxDrainTime, later.MaxDrainTime)
	require.Positive(t, st.MaxDrainTime)
	require.Equal(t, withoutClocks(later), withoutClocks(st))
	require.Len(t, st.PerShard, 4)
	require.Less(t, allocs.PerCall(1000, func() { s.ReadStats(&st) }), allocs.Noise, "ReadStats into a Stats that has room")
	require.PanicsWithValue(t, "sink: ReadStats with a nil *Stats", func() { s.ReadStats(nil) })
}

// The monitor's reports are counted in Stats.Overloads, one per report.
func TestOverloadsCountTheMonitorsReports(t *testing.T) {
	r := &recorder{}
	s, g := overflow(t, sink.Config[ev]{OverloadInterval: 10 * time.Millisecond, OnOverload: r.onOverload, Logger: quiet}, 2)
	eventually(t, func() bool { return len(r.snapshot()) == 1 }, "the first report")
	require.Equal(t, uint64(1), s.Stats().Overloads)
	s.Handle().Push(ev{99})
	eventually(t, func() bool { return len(r.snapshot()) == 2 }, "the second report")
	require.Equal(t, uint64(2), s.Stats().Overloads)
	g.release()
	require.NoError(t, s.Shutdown(context.Background()))
	require.Equal(t, uint64(len(r.snapshot())), s.Stats().Overloads)
}

// withoutClocks returns st with its time gauges (MaxDrainTime, MaxWorkerDelay)
// zeroed, in the sink and in every shard, for comparing two snapshots
// taken at different instants.
func withoutClocks(st sink.Stats) sink.Stats {
	st.MaxDrainTime, st.MaxWorkerDelay = 0, 0
	st.PerShard = slices.Clone(st.PerShard)
	for i := range st.PerShard {
		st.PerShard[i].MaxDrainTime, st.PerShard[i].MaxWorkerDelay = 0, 0
	}
	return st
}
