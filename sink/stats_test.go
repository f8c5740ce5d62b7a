package sink_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/sink"
)

func TestStatsMarshalsToSnakeCaseJSON(t *testing.T) {
	s := newSink(t, sink.Config[ev]{Name: "events", Shards: 2}, nop[ev]())
	b, err := json.Marshal(s.Stats())
	require.NoError(t, err)
	require.JSONEq(t, `{"name":"events","shards":2,"dropped":0,"queued":0,"per_shard":[
		{"shard":0,"dropped":0,"queued":0},{"shard":1,"dropped":0,"queued":0}]}`, string(b))
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
