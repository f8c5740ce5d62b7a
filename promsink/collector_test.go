package promsink_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/promsink"
	"github.com/shardedsink/shardedsink/promsink/internal/seriestest"
	"github.com/shardedsink/shardedsink/sink/sinktest"
)

func TestSinkCollectorExportsTheTotalsOfStats(t *testing.T) {
	c := promsink.NewSinkCollector(&fakeSink{sinktest.TwoShards("orders")})
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(seriestest.RingTotals)))
	require.Equal(t, 8+17, testutil.CollectAndCount(c))
}

func TestSinkCollectorWithPerShardExportsEachShard(t *testing.T) {
	c := promsink.NewSinkCollector(&fakeSink{sinktest.TwoShards("orders")}, promsink.WithPerShard())
	want := `
# HELP shardedsink_dropped_total Values dropped, by reason: full (every ring tried was full in slots), bytes (MaxQueuedBytes spent), waited_out (a PushWait whose context ended before room came), after_shutdown (pushed once Shutdown had begun), displaced (pushed out of a full ring by DropOldest), disk (the spill tier was full or off, or lost the value).
# TYPE shardedsink_dropped_total counter
shardedsink_dropped_total{reason="after_shutdown",shard="0",sink="orders"} 1
shardedsink_dropped_total{reason="after_shutdown",shard="1",sink="orders"} 4
shardedsink_dropped_total{reason="bytes",shard="0",sink="orders"} 4
shardedsink_dropped_total{reason="bytes",shard="1",sink="orders"} 7
shardedsink_dropped_total{reason="disk",shard="0",sink="orders"} 1
shardedsink_dropped_total{reason="disk",shard="1",sink="orders"} 2
shardedsink_dropped_total{reason="displaced",shard="0",sink="orders"} 2
shardedsink_dropped_total{reason="displaced",shard="1",sink="orders"} 6
shardedsink_dropped_total{reason="full",shard="0",sink="orders"} 1
shardedsink_dropped_total{reason="full",shard="1",sink="orders"} 0
shardedsink_dropped_total{reason="waited_out",shard="0",sink="orders"} 2
shardedsink_dropped_total{reason="waited_out",shard="1",sink="orders"} 3
# HELP shardedsink_capacity_values Slots of the rings: the most values they hold.
# TYPE shardedsink_capacity_values gauge
shardedsink_capacity_values{shard="0",sink="orders"} 64
shardedsink_capacity_values{shard="1",sink="orders"} 64
# HELP shardedsink_queued_bytes Sizes (Config.SizeOf) of the values in the rings and in batches whose Drain has not returned; 0 without MaxQueuedBytes.
# TYPE shardedsink_queued_bytes gauge
shardedsink_queued_bytes{shard="0",sink="orders"} 300
shardedsink_queued_bytes{shard="1",sink="orders"} 500
# HELP shardedsink_shards Shards (rings, each with its drain worker) of the sink.
# TYPE shardedsink_shards gauge
shardedsink_shards{sink="orders"} 2
`
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want),
		"shardedsink_dropped_total", "shardedsink_capacity_values", "shardedsink_queued_bytes", "shardedsink_shards"))
	require.Equal(t, 8+2*17, testutil.CollectAndCount(c))
}

func TestHandlerCollectorExportsStatsByLevel(t *testing.T) {
	c := promsink.NewHandlerCollector(&fakeHandler{handlerStats()}, "")
	want := `
# HELP shardedsink_slog_abandoned_records_total Records accepted but not written because Close's context ended first.
# TYPE shardedsink_slog_abandoned_records_total counter
shardedsink_slog_abandoned_records_total{sink="slogsink"} 9
# HELP shardedsink_slog_dropped_for_bytes_records_total Of the records dropped, those shed because their shard's share of MaxQueuedBytes was spent.
# TYPE shardedsink_slog_dropped_for_bytes_records_total counter
shardedsink_slog_dropped_for_bytes_records_total{sink="slogsink"} 6
# HELP shardedsink_slog_waited_out_records_total Of the records dropped, those at or above KeepLevel that waited KeepWait for room and found none.
# TYPE shardedsink_slog_waited_out_records_total counter
shardedsink_slog_waited_out_records_total{sink="slogsink"} 3
# HELP shardedsink_slog_dropped_records_total Records shed, by level: debug (below INFO), info (INFO), warn (WARN), error (ERROR and above); each found its ring full in slots or bytes (below KeepLevel), or came after Close.
# TYPE shardedsink_slog_dropped_records_total counter
shardedsink_slog_dropped_records_total{level="debug",sink="slogsink"} 1
shardedsink_slog_dropped_records_total{level="error",sink="slogsink"} 12
shardedsink_slog_dropped_records_total{level="info",sink="slogsink"} 2
shardedsink_slog_dropped_records_total{level="warn",sink="slogsink"} 0
# HELP shardedsink_slog_empty_records_total Records for which the Format handler wrote no bytes.
# TYPE shardedsink_slog_empty_records_total counter
shardedsink_slog_empty_records_total{sink="slogsink"} 10
# HELP shardedsink_slog_failed_records_total Records lost to an error or a panic in a Write or in the Format handler.
# TYPE shardedsink_slog_failed_records_total counter
shardedsink_slog_failed_records_total{sink="slogsink"} 7
# HELP shardedsink_slog_panics_total Recovered panics and runtime.Goexit calls in the writer, the Format handler and OnError.
# TYPE shardedsink_slog_panics_total counter
shardedsink_slog_panics_total{sink="slogsink"} 8
# HELP shardedsink_slog_spilled_records_total Records moved to the spill directory (SpillDir) while a Write was slow.
# TYPE shardedsink_slog_spilled_records_total counter
shardedsink_slog_spilled_records_total{sink="slogsink"} 400
# HELP shardedsink_slog_recovered_records_total Records an earlier writer left in the spill directory, written by this one.
# TYPE shardedsink_slog_recovered_records_total counter
shardedsink_slog_recovered_records_total{sink="slogsink"} 20
# HELP shardedsink_slog_lost_on_disk_records_total Records the spill tier lost (a failed disk write, a corrupt record).
# TYPE shardedsink_slog_lost_on_disk_records_total counter
shardedsink_slog_lost_on_disk_records_total{sink="slogsink"} 2
# HELP shardedsink_slog_on_disk_records Records in the spill directory now.
# TYPE shardedsink_slog_on_disk_records gauge
shardedsink_slog_on_disk_records{sink="slogsink"} 30
# HELP shardedsink_slog_written_records_total Records in Writes that succeeded.
# TYPE shardedsink_slog_written_records_total counter
shardedsink_slog_written_records_total{sink="slogsink"} 1000
`
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want)))
}

func TestEveryCollectorIsPromlintClean(t *testing.T) {
	for name, c := range map[string]prometheus.Collector{
		"sink":           promsink.NewSinkCollector(&fakeSink{sinktest.TwoShards("orders")}),
		"sink per shard": promsink.NewSinkCollector(&fakeSink{sinktest.TwoShards("orders")}, promsink.WithPerShard()),
		"handler":        promsink.NewHandlerCollector(&fakeHandler{handlerStats()}, "app"),
	} {
		t.Run(name, func(t *testing.T) {
			problems, err := testutil.CollectAndLint(c)
			require.NoError(t, err)
			require.Empty(t, problems)
		})
	}
}

func TestCollectorsOfTwoSinksRegisterSideBySide(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(promsink.NewSinkCollector(&fakeSink{sinktest.TwoShards("a")})))
	require.NoError(t, reg.Register(promsink.NewSinkCollector(&fakeSink{sinktest.TwoShards("b")})))
	require.NoError(t, reg.Register(promsink.NewHandlerCollector(&fakeHandler{handlerStats()}, "app")))
	// A second collector of one sink name is refused, as Prometheus
	// refuses any duplicate series.
	err := reg.Register(promsink.NewSinkCollector(&fakeSink{sinktest.TwoShards("a")}))
	require.ErrorAs(t, err, &prometheus.AlreadyRegisteredError{})
	mfs, err := reg.Gather() // the pedantic registry checks each metric against its Desc
	require.NoError(t, err)
	require.NotEmpty(t, mfs)
}

func TestACollectorReportsAShardCountThatChanged(t *testing.T) {
	f := &fakeSink{sinktest.TwoShards("orders")}
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(promsink.NewSinkCollector(f)))
	f.st.PerShard = f.st.PerShard[:1]
	_, err := reg.Gather()
	require.ErrorContains(t, err, `promsink: sink "orders" reports 1 shards, the collector was made for 2`)
}

// Two sinks, one per shard and one in total: one registry refuses the
// pair (one family, two sets of label names), and two registries served
// through prometheus.Gatherers, as WithPerShard's doc says, export both.
func TestTwoSinksOnePerShardAndOneInTotal(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(promsink.NewSinkCollector(&fakeSink{sinktest.TwoShards("a")}, promsink.WithPerShard()))
	require.Error(t, reg.Register(promsink.NewSinkCollector(&fakeSink{sinktest.TwoShards("b")})))

	perShard, total := prometheus.NewPedanticRegistry(), prometheus.NewPedanticRegistry()
	perShard.MustRegister(promsink.NewSinkCollector(&fakeSink{sinktest.TwoShards("a")}, promsink.WithPerShard()))
	total.MustRegister(promsink.NewSinkCollector(&fakeSink{sinktest.TwoShards("b")}))
	mfs, err := prometheus.Gatherers{perShard, total}.Gather()
	require.NoError(t, err)
	sinks := map[string]bool{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "sink" {
					sinks[l.GetValue()] = true
				}
			}
		}
	}
	require.Equal(t, map[string]bool{"a": true, "b": true}, sinks)
}

// A logsink writer of any front-end exports the handler's series under the
// log's name, with the same values (the zapsink and zerologsink writers'
// Stats are logsink.Stats).
func TestLogCollectorExportsAnyWritersStats(t *testing.T) {
	h := promsink.NewHandlerCollector(&fakeHandler{handlerStats()}, "")
	w := promsink.NewLogCollector(&fakeLog{logsink.Stats(handlerStats())}, "")
	require.Equal(t, testutil.CollectAndCount(h), testutil.CollectAndCount(w))
	for _, family := range []string{"written_records_total", "dropped_records_total", "failed_records_total", "empty_records_total"} {
		slog := testutil.CollectAndCount(h, "shardedsink_slog_"+family)
		log := testutil.CollectAndCount(w, "shardedsink_log_"+family)
		require.Positive(t, log, family)
		require.Equal(t, slog, log, family)
	}
	problems, err := testutil.CollectAndLint(w)
	require.NoError(t, err)
	require.Empty(t, problems)
	want := `
# HELP shardedsink_log_written_records_total Records in Writes that succeeded.
# TYPE shardedsink_log_written_records_total counter
shardedsink_log_written_records_total{sink="logsink"} 1000
`
	require.NoError(t, testutil.CollectAndCompare(w, strings.NewReader(want), "shardedsink_log_written_records_total"))
}
