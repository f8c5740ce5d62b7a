package otelmetric_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/otelmetric"
	"github.com/shardedsink/shardedsink/otelmetric/internal/instrumentstest"
	"github.com/shardedsink/shardedsink/sink/sinktest"
)

// n is the attribute of the sink "orders" of sinktest.TwoShards.
const n = "shardedsink.sink.name=orders"

func TestObserveSinkObservesTheTotalsOfStats(t *testing.T) {
	mp, r := instrumentstest.NewReader(t)
	_, err := otelmetric.ObserveSink(mp, &fakeSink{sinktest.TwoShards("orders")})
	require.NoError(t, err)
	got := instrumentstest.Collect(t, r)
	require.Equal(t, instrumentstest.RingTotals, instrumentstest.Values(got))
	require.True(t, got["shardedsink.processed{"+n+"}"].Monotonic, "processed is a counter")
	require.False(t, got["shardedsink.queue.size{"+n+"}"].Monotonic, "queue.size is an up-down counter")
	require.Equal(t, "By", got["shardedsink.queue.bytes{"+n+"}"].Unit)
}

func TestObserveSinkWithPerShardObservesEachShard(t *testing.T) {
	mp, r := instrumentstest.NewReader(t)
	_, err := otelmetric.ObserveSink(mp, &fakeSink{sinktest.TwoShards("orders")}, otelmetric.WithPerShard())
	require.NoError(t, err)
	got := instrumentstest.Values(instrumentstest.Collect(t, r))
	require.Len(t, got, 8+2*17)
	require.Equal(t, int64(1), got["shardedsink.processed{error.type=queue_full,shardedsink.shard=0,"+n+"}"])
	require.Equal(t, int64(0), got["shardedsink.processed{error.type=queue_full,shardedsink.shard=1,"+n+"}"])
	require.Equal(t, int64(2), got["shardedsink.processed{error.type=disk,shardedsink.shard=1,"+n+"}"])
	require.Equal(t, int64(4), got["shardedsink.processed{error.type=shutdown,shardedsink.shard=1,"+n+"}"])
	require.Equal(t, int64(6), got["shardedsink.processed{error.type=displaced,shardedsink.shard=1,"+n+"}"])
	require.Equal(t, int64(6), got["shardedsink.overloads{"+n+"}"])
	require.Equal(t, int64(3), got["shardedsink.processed{error.type=waited_out,shardedsink.shard=1,"+n+"}"])
	require.Equal(t, int64(4), got["shardedsink.queue.waiting{shardedsink.shard=1,"+n+"}"])
	require.Equal(t, int64(500), got["shardedsink.queue.bytes{shardedsink.shard=1,"+n+"}"])
	require.Equal(t, int64(64), got["shardedsink.queue.capacity{shardedsink.shard=0,"+n+"}"])
	require.Equal(t, int64(2), got["shardedsink.shards{"+n+"}"])
}

func TestObserveHandlerObservesStatsByLevel(t *testing.T) {
	mp, r := instrumentstest.NewReader(t)
	_, err := otelmetric.ObserveHandler(mp, &fakeHandler{handlerStats()}, "")
	require.NoError(t, err)
	const a = "shardedsink.sink.name=slogsink"
	require.Equal(t, map[string]int64{
		"shardedsink.slog.processed{" + a + "}":                                                   1000,
		"shardedsink.slog.processed{error.type=queue_full,shardedsink.log.level=debug," + a + "}": 1,
		"shardedsink.slog.processed{error.type=queue_full,shardedsink.log.level=info," + a + "}":  2,
		"shardedsink.slog.processed{error.type=queue_full,shardedsink.log.level=warn," + a + "}":  0,
		"shardedsink.slog.processed{error.type=queue_full,shardedsink.log.level=error," + a + "}": 12,
		"shardedsink.slog.processed{error.type=write_failed," + a + "}":                           7,
		"shardedsink.slog.processed{error.type=abandoned," + a + "}":                              9,
		"shardedsink.slog.dropped_for_bytes{" + a + "}":                                           6,
		"shardedsink.slog.waited_out{" + a + "}":                                                  3,
		"shardedsink.slog.empty{" + a + "}":                                                       10,
		"shardedsink.slog.panics{" + a + "}":                                                      8,
		"shardedsink.slog.processed{error.type=spill_lost," + a + "}":                             2,
		"shardedsink.slog.spill.spilled{" + a + "}":                                               400,
		"shardedsink.slog.spill.recovered{" + a + "}":                                             20,
		"shardedsink.slog.spill.queue.size{" + a + "}":                                            30,
	}, instrumentstest.Values(instrumentstest.Collect(t, r)))
}

// A logsink writer of any front-end is observed with the handler's
// instruments under the log's name, with the same values (the zapsink and
// zerologsink writers' Stats are logsink.Stats).
func TestObserveLogObservesAnyWritersStats(t *testing.T) {
	mp, r := instrumentstest.NewReader(t)
	_, err := otelmetric.ObserveHandler(mp, &fakeHandler{handlerStats()}, "x")
	require.NoError(t, err)
	_, err = otelmetric.ObserveLog(mp, &fakeLog{logsink.Stats(handlerStats())}, "")
	require.NoError(t, err)
	got := instrumentstest.Values(instrumentstest.Collect(t, r))
	n := 0
	for name, v := range got {
		if !strings.HasPrefix(name, "shardedsink.slog.") {
			continue
		}
		logName := strings.Replace(strings.Replace(name, "shardedsink.slog.", "shardedsink.log.", 1), "shardedsink.sink.name=x", "shardedsink.sink.name=logsink", 1)
		require.Contains(t, got, logName)
		require.Equal(t, v, got[logName], logName)
		n++
	}
	require.Equal(t, 15, n)
}

func TestUnregisterStopsTheObservations(t *testing.T) {
	mp, r := instrumentstest.NewReader(t)
	reg, err := otelmetric.ObserveSink(mp, &fakeSink{sinktest.TwoShards("orders")})
	require.NoError(t, err)
	require.NotEmpty(t, instrumentstest.Collect(t, r))
	require.NoError(t, reg.Unregister())
	require.Empty(t, instrumentstest.Collect(t, r), "keys: %v", instrumentstest.SortedKeys(instrumentstest.Collect(t, r)))
}

func TestANilMeterProviderIsRefused(t *testing.T) {
	_, err := otelmetric.ObserveSink(nil, &fakeSink{sinktest.TwoShards("orders")})
	require.EqualError(t, err, "otelmetric: MeterProvider is nil")
	_, err = otelmetric.ObserveHandler(nil, &fakeHandler{}, "x")
	require.EqualError(t, err, "otelmetric: MeterProvider is nil")
}

func TestAShardCountThatChangedIsAnError(t *testing.T) {
	mp, r := instrumentstest.NewReader(t)
	f := &fakeSink{sinktest.TwoShards("orders")}
	_, err := otelmetric.ObserveSink(mp, f)
	require.NoError(t, err)
	f.st.PerShard = f.st.PerShard[:1]
	_, err = instrumentstest.CollectErr(r)
	require.ErrorContains(t, err, `otelmetric: sink "orders" reports 1 shards, the instruments were made for 2`)
	_ = context.Background()
}
