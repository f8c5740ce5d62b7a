package sink_test

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/sink"
)

func TestStatsMarshalsToSnakeCaseJSON(t *testing.T) {
	s := newSink(t, sink.Config[ev]{Name: "events", Shards: 2}, nop[ev]())
	b, err := json.Marshal(s.Stats())
	require.NoError(t, err)
	require.JSONEq(t, `{"name":"events","shards":2,"ring_capacity":8192,
		"dropped":0,"queued":0,"drained":0,"drain_panics":0,"dropped_for_bytes":0,"queued_bytes":0,"waited_out":0,"waiting":0,
		"dropped_after_shutdown":0,"displaced":0,"overloads":0,"hand_offs":0,"max_drain_time_ns":0,"max_worker_delay_ns":0,
		"spilled":0,"spill_drained":0,"recovered":0,"spill_queued":0,"spill_bytes":0,"dropped_for_disk":0,"spill_lost":0,"spill_errors":0,"spill_corrupt":0,"per_shard":[
		{"shard":0,"dropped":0,"queued":0,"drained":0,"drain_panics":0,"dropped_for_bytes":0,"queued_bytes":0,"waited_out":0,"waiting":0,"dropped_after_shutdown":0,"displaced":0,
		 "hand_offs":0,"max_drain_time_ns":0,"max_worker_delay_ns":0,"dropped_for_disk":0,"spilled":0,"spill_queued":0},
		{"shard":1,"dropped":0,"queued":0,"drained":0,"drain_panics":0,"dropped_for_bytes":0,"queued_bytes":0,"waited_out":0,"waiting":0,"dropped_after_shutdown":0,"displaced":0,
		 "hand_offs":0,"max_drain_time_ns":0,"max_worker_delay_ns":0,"dropped_for_disk":0,"spilled":0,"spill_queued":0}]}`, string(b))
}

// Drained counts the values taken from each ring for Drain, DrainPanics the
// Drain calls of each shard's worker that panicked or called Goexit, and
// the totals are the sums.
func TestStatsCountDrainedValuesAndDrainPanics(t *testing.T) {
	logger, _ := testLogger()
	cfg := testCfg(2, 64, 4)
	cfg.Logger = logger
	s := newSink(t, cfg, sink.ActionFunc[ev](func(_ context.Context, batch []ev) {
		switch batch[0].id {
		case 1000:
			panic("drain failed")
		case 2000:
			runtime.Goexit()
		}
	}))
	h0, h1 := s.Handle(), s.Handle()
	require.NotEqual(t, h0.Shard(), h1.Shard())
	for i := range 10 {
		require.True(t, h0.Push(ev{i}))
	}
	flush(t, s)
	require.True(t, h1.Push(ev{1000})) // a batch of one that panics
	flush(t, s)
	require.True(t, h1.Push(ev{2000})) // and one that calls Goexit
	flush(t, s)
	for i := range 3 {
		require.True(t, h1.Push(ev{i}))
	}
	flush(t, s)

	st := s.Stats()
	require.Equal(t, 64, st.RingCapacity)
	require.Equal(t, uint64(10), st.PerShard[h0.Shard()].Drained)
	require.Equal(t, uint64(5), st.PerShard[h1.Shard()].Drained)
	require.Equal(t, uint64(15), st.Drained)
	require.Zero(t, st.PerShard[h0.Shard()].DrainPanics)
	require.Equal(t, uint64(2), st.PerShard[h1.Shard()].DrainPanics)
	require.Equal(t, uint64(2), st.DrainPanics)
}

func TestStatsCountsQueuedValuesNotBatches(t *testing.T) {
	g := newGate[ev]()
	s := newSink(t, testCfg(2, 8, 1), g)
	t.Cleanup(g.release)
	h := s.Handle()
	require.True(t, h.Push(ev{0}))
	g.waitEntered(t) // ev{0} is in a batch now
	for i := range 3 {
		require.True(t, h.Push(ev{i + 1}))
	}
	st := s.Stats()
	require.Equal(t, 3, st.Queued)
	require.Equal(t, 3, st.PerShard[h.Shard()].Queued)
	require.Equal(t, 0, st.PerShard[1-h.Shard()].Queued)
	require.Equal(t, []int{0, 1}, []int{st.PerShard[0].Shard, st.PerShard[1].Shard})
}
