package sink_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/tmpfs"
)

// A full disk (a tmpfs of 512 KiB, mounted when the test runs as root) is
// not fatal: a failed write turns spilling off for a while and is logged,
// the values it lost and the pushes refused meanwhile are counted as
// dropped for the disk, and once Drain comes back every value is either
// delivered or counted: Drained + Dropped == pushes.
func TestAFullDiskTurnsSpillingOffAndNothingGoesUncounted(t *testing.T) {
	dir := tmpfs.Mount(t, "512k")
	logger, logs := testLogger()
	g := &stallable{}
	g.stalled.Store(true)
	cfg := crashCfg(dir) // 1000-byte records, a budget of 64 MiB: the tmpfs fills first
	cfg.Logger = logger
	s := newSink(t, cfg, g)
	h := s.Handle()
	const pushes = 3000
	for i := range pushes {
		h.Push(uint64(i))
	}
	st := s.Stats()
	require.Positive(t, st.SpillErrors, "the tmpfs filled")
	require.Positive(t, st.DroppedForDisk)
	require.Zero(t, st.DroppedFull(), "every push refused while the disk was off counts for the disk")
	require.Contains(t, logs.String(), "spilling is off for a while")
	g.stalled.Store(false)
	require.NoError(t, s.Flush(t.Context()))
	st = s.Stats()
	require.Equal(t, uint64(pushes), st.Drained+st.Dropped, "%+v", st)
	require.Equal(t, st.Dropped, st.DroppedForDisk+st.DroppedFull())
	got := g.values()
	for i := 1; i < len(got); i++ {
		require.Less(t, got[i-1], got[i], "in order")
	}

	// Drain caught up and gave the disk back: after the pause (a second)
	// the tier spills again.
	time.Sleep(time.Second + 100*time.Millisecond)
	spilled := st.Spilled
	g.stalled.Store(true)
	for i := range 200 {
		h.Push(uint64(pushes + i))
	}
	require.Eventually(t, func() bool { return s.Stats().Spilled > spilled }, 5*time.Second, time.Millisecond, "spilling resumed")
	g.stalled.Store(false)
}

// stallable is an Action that stalls while stalled is set (until its ctx
// ends) and records what it is handed.
type stallable struct {
	collector[uint64]
	stalled atomic.Bool
}

func (a *stallable) Drain(ctx context.Context, batch []uint64) {
	for a.stalled.Load() && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	a.collector.Drain(ctx, batch)
}
