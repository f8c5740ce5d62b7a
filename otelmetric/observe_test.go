package otelmetric_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/otelmetric"
	"github.com/shardedsink/shardedsink/otelmetric/natsmetric"
)

const n = "shardedsink.sink.name=orders"

var ringTotals = map[string]int64{
	"shardedsink.shards{" + n + "}":                                2,
	"shardedsink.queue.size{" + n + "}":                            8,
	"shardedsink.queue.capacity{" + n + "}":                        128,
	"shardedsink.queue.bytes{" + n + "}":                           800,
	"shardedsink.processed{" + n + "}":                             300,
	"shardedsink.processed{error.type=queue_full," + n + "}":       4,
	"shardedsink.processed{error.type=queue_bytes_full," + n + "}": 11,
	"shardedsink.processed{error.type=waited_out," + n + "}":       5,
	"shardedsink.processed{error.type=shutdown," + n + "}":         5,
	"shardedsink.processed{error.type=displaced," + n + "}":        8,
	"shardedsink.handoffs{" + n + "}":                              11,
	"shardedsink.drain.max_time{" + n + "}":                        3000,
	"shardedsink.drain.max_take_lag{" + n + "}":                    7000,
	"shardedsink.overloads{" + n + "}":                             6,
	"shardedsink.queue.waiting{" + n + "}":                         5,
	"shardedsink.drain.panics{" + n + "}":                          3,
}

func TestObserveSinkObservesTheTotalsOfStats(t *testing.T) {
	mp, r := newReader(t)
	_, err := otelmetric.ObserveSink(mp, &fakeSink{twoShards("orders")})
	require.NoError(t, err)
	got := collect(t, r)
	require.Equal(t, ringTotals, values(got))
	require.True(t, got["shardedsink.processed{"+n+"}"].monotonic, "processed is a counter")
	require.False(t, got["shardedsink.queue.size{"+n+"}"].monotonic, "queue.size is an up-down counter")
	require.Equal(t, "By", got["shardedsink.queue.bytes{"+n+"}"].unit)
}

func TestObserveSinkWithPerShardObservesEachShard(t *testing.T) {
	mp, r := newReader(t)
	_, err := otelmetric.ObserveSink(mp, &fakeSink{twoShards("orders")}, otelmetric.WithPerShard())
	require.NoError(t, err)
	got := values(collect(t, r))
	require.Len(t, got, 2+2*14)
	require.Equal(t, int64(2), got["shardedsink.processed{error.type=queue_full,shardedsink.shard=0,"+n+"}"])
	require.Equal(t, int64(2), got["shardedsink.processed{error.type=queue_full,shardedsink.shard=1,"+n+"}"])
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
	mp, r := newReader(t)
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
	}, values(collect(t, r)))
}

// A logsink writer of any front-end is observed with the handler's
// instruments under the log's name, with the same values (the zapsink and
// zerologsink writers' Stats are logsink.Stats).
func TestObserveLogObservesAnyWritersStats(t *testing.T) {
	mp, r := newReader(t)
	_, err := otelmetric.ObserveHandler(mp, &fakeHandler{handlerStats()}, "x")
	require.NoError(t, err)
	_, err = otelmetric.ObserveLog(mp, &fakeLog{logsink.Stats(handlerStats())}, "")
	require.NoError(t, err)
	got := values(collect(t, r))
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
	require.Equal(t, 11, n)
}

func TestNATSObserveObservesItsCountsAndItsRings(t *testing.T) {
	mp, r := newReader(t)
	_, err := natsmetric.Observe(mp, &fakeNATS{natsStats()})
	require.NoError(t, err)
	want := map[string]int64{
		"shardedsink.nats.pushed{" + n + "}":                     341,
		"shardedsink.nats.queued{" + n + "}":                     9,
		"shardedsink.nats.inflight{" + n + "}":                   4,
		"shardedsink.nats.exported{" + n + "}":                   280,
		"shardedsink.nats.exported{error.type=failed," + n + "}": 15,
		"shardedsink.nats.duplicates{" + n + "}":                 2,
		"shardedsink.nats.retries{" + n + "}":                    17,
	}
	for k, v := range ringTotals {
		want[k] = v
	}
	require.Equal(t, want, values(collect(t, r)))
}

func TestUnregisterStopsTheObservations(t *testing.T) {
	mp, r := newReader(t)
	reg, err := otelmetric.ObserveSink(mp, &fakeSink{twoShards("orders")})
	require.NoError(t, err)
	require.NotEmpty(t, collect(t, r))
	require.NoError(t, reg.Unregister())
	require.Empty(t, collect(t, r), "keys: %v", sortedKeys(collect(t, r)))
}

func TestANilMeterProviderIsRefused(t *testing.T) {
	_, err := otelmetric.ObserveSink(nil, &fakeSink{twoShards("orders")})
	require.EqualError(t, err, "otelmetric: MeterProvider is nil")
	_, err = otelmetric.ObserveHandler(nil, &fakeHandler{}, "x")
	require.EqualError(t, err, "otelmetric: MeterProvider is nil")
	_, err = natsmetric.Observe(nil, &fakeNATS{})
	require.EqualError(t, err, "natsmetric: MeterProvider is nil")
}

func TestAShardCountThatChangedIsAnError(t *testing.T) {
	mp, r := newReader(t)
	f := &fakeSink{twoShards("orders")}
	_, err := otelmetric.ObserveSink(mp, f)
	require.NoError(t, err)
	f.st.PerShard = f.st.PerShard[:1]
	_, err = collectErr(r)
	require.ErrorContains(t, err, `otelmetric: sink "orders" reports 1 shards, the instruments were made for 2`)
	_ = context.Background()
}
