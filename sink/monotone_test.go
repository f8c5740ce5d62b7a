package sink_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/sink"
	"github.com/shardedsink/shardedsink/sink/sinktest"
)

// counters returns the counters of st that must only grow, by name, per
// shard and in total.
func counters(st *sink.Stats) map[string]uint64 {
	m := map[string]uint64{
		"Dropped": st.Dropped, "DroppedForSlots": st.DroppedForSlots(), "DroppedForBytes": st.DroppedForBytes,
		"WaitedOut": st.WaitedOut, "DroppedAfterShutdown": st.DroppedAfterShutdown, "Displaced": st.Displaced,
		"Drained": st.Drained, "HandOffs": st.HandOffs, "Overloads": st.Overloads,
	}
	for i, ss := range st.PerShard {
		for name, v := range map[string]uint64{
			"Dropped": ss.Dropped, "DroppedForSlots": ss.DroppedForSlots(), "DroppedForBytes": ss.DroppedForBytes,
			"WaitedOut": ss.WaitedOut, "DroppedAfterShutdown": ss.DroppedAfterShutdown, "Displaced": ss.Displaced,
			"Drained": ss.Drained,
		} {
			m[name+"/"+string(rune('0'+i))] = v
		}
	}
	return m
}

// Producers push, PushWait callers wait out, a byte budget refuses, and
// under DropOldest full rings displace, while a reader takes snapshots
// without pause: no counter of a snapshot is below the one before. Before
// each drop was counted in its reason alone, a drop in flight was
// counted in Dropped first, so a snapshot showed it as "full" and the next
// one under its reason, and DroppedForSlots went down.
func TestEveryCounterOnlyGrowsUnderConcurrentDrops(t *testing.T) {
	for _, overflow := range []sink.Overflow{sink.DropNewest, sink.DropOldest} {
		t.Run(overflow.String(), func(t *testing.T) {
			s, err := sinktest.NewDropping(overflow)
			require.NoError(t, err)
			stop := sinktest.Load(s)
			var last map[string]uint64
			var st sink.Stats
			deadline := time.Now().Add(300 * time.Millisecond)
			for snapshots := 0; time.Now().Before(deadline); snapshots++ {
				s.ReadStats(&st)
				now := counters(&st)
				for name, v := range now {
					if prev, ok := last[name]; ok && v < prev {
						stop()
						t.Fatalf("snapshot %d: %s went from %d to %d", snapshots, name, prev, v)
					}
				}
				last = now
			}
			stop()
			require.NoError(t, s.Shutdown(context.Background()))
			s.ReadStats(&st)
			require.Positive(t, st.DroppedForBytes+st.WaitedOut, "no drop with a reason: the test does not test them")
			if overflow == sink.DropOldest {
				require.Positive(t, st.Displaced, "nothing displaced: the test does not test it")
			} else {
				require.Positive(t, st.DroppedForSlots(), "no drop for a full ring: the test does not test them")
			}
		})
	}
}
