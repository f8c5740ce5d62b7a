package natsprom_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/promsink"
	"github.com/shardedsink/shardedsink/promsink/internal/seriestest"
	"github.com/shardedsink/shardedsink/promsink/natsprom"
	"github.com/shardedsink/shardedsink/sink"
	"github.com/shardedsink/shardedsink/sink/sinktest"
)

// fakeNATS returns fixed Stats in which every field has its own value, so
// that a series that reads the wrong field shows.
type fakeNATS struct{ st natssink.Stats }

func (f *fakeNATS) Stats() natssink.Stats { return f.st }

func natsStats() natssink.Stats {
	return natssink.Stats{Name: "orders", Pushed: 341, Dropped: 33, Queued: 9, InFlight: 4, InFlightBytes: 640, Acked: 280,
		Duplicates: 2, Batched: 12, Failed: 15, Retried: 17, Rings: sinktest.TwoShards("orders")}
}

func TestTheCollectorExportsItsCountsAndItsRings(t *testing.T) {
	c := natsprom.NewCollector(&fakeNATS{natsStats()})
	want := `
# HELP shardedsink_nats_acked_values_total Values the stream acknowledged.
# TYPE shardedsink_nats_acked_values_total counter
shardedsink_nats_acked_values_total{sink="orders"} 280
# HELP shardedsink_nats_batched_values_total Of the values acked, those acked by a fast batch (Config.FastBatches).
# TYPE shardedsink_nats_batched_values_total counter
shardedsink_nats_batched_values_total{sink="orders"} 12
# HELP shardedsink_nats_duplicate_acks_total Acks saying the stream already held the value (a retry after a lost ack); each value is counted once among those acked.
# TYPE shardedsink_nats_duplicate_acks_total counter
shardedsink_nats_duplicate_acks_total{sink="orders"} 2
# HELP shardedsink_nats_failed_values_total Values given up: out of attempts or budget, a permanent error, an Encode error, or given up by Shutdown.
# TYPE shardedsink_nats_failed_values_total counter
shardedsink_nats_failed_values_total{sink="orders"} 15
# HELP shardedsink_nats_in_flight_bytes Payload bytes of the values in flight; at most about MaxInFlightBytes.
# TYPE shardedsink_nats_in_flight_bytes gauge
shardedsink_nats_in_flight_bytes{sink="orders"} 640
# HELP shardedsink_nats_in_flight_values Values published and awaiting their ack or a retry; at most MaxInFlight.
# TYPE shardedsink_nats_in_flight_values gauge
shardedsink_nats_in_flight_values{sink="orders"} 4
# HELP shardedsink_nats_pushed_values_total Calls of Push: dropped, queued, in flight, acked or failed.
# TYPE shardedsink_nats_pushed_values_total counter
shardedsink_nats_pushed_values_total{sink="orders"} 341
# HELP shardedsink_nats_queued_values Values accepted and not yet published: in the rings, on disk, or with a worker waiting for room (MaxInFlight).
# TYPE shardedsink_nats_queued_values gauge
shardedsink_nats_queued_values{sink="orders"} 9
# HELP shardedsink_nats_retries_total Publishes after a value's first.
# TYPE shardedsink_nats_retries_total counter
shardedsink_nats_retries_total{sink="orders"} 17
` + seriestest.RingTotals
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want)))
}

func TestTheCollectorIsPromlintClean(t *testing.T) {
	for _, opts := range [][]promsink.Option{nil, {promsink.WithPerShard()}} {
		problems, err := testutil.CollectAndLint(natsprom.NewCollector(&fakeNATS{natsStats()}, opts...))
		require.NoError(t, err)
		require.Empty(t, problems)
	}
}

// Beside promsink's collectors of other sinks, in one registry.
func TestTheCollectorRegistersBesideASinksCollector(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(promsink.NewSinkCollector(&fakeSink{sinktest.TwoShards("a")})))
	require.NoError(t, reg.Register(natsprom.NewCollector(&fakeNATS{natsStats()})))
	mfs, err := reg.Gather() // the pedantic registry checks each metric against its Desc
	require.NoError(t, err)
	require.NotEmpty(t, mfs)
}

// A real natssink sink scraped over HTTP while producers push: its
// counters never go down from one scrape to the next, and once it has
// shut down the scrape equals its Stats, every push counted once.
func TestAScrapeWhileProducersPushShowsStatsOnceQuiet(t *testing.T) {
	ns := natsSink(t, 2)
	reg := prometheus.NewRegistry()
	reg.MustRegister(natsprom.NewCollector(ns))
	url := seriestest.Serve(t, reg)

	var pushed, scrapes atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := 0; i < 500 || scrapes.Load() < 5; i++ {
				ns.Push(i)
				pushed.Add(1)
			}
		})
	}
	stop := seriestest.Watch(t, url, &scrapes)
	wg.Wait()
	stop()
	require.NoError(t, ns.Shutdown(context.Background()))

	got := seriestest.Scrape(t, url)
	st := ns.Stats()
	var dropped float64
	for _, r := range []string{"full", "bytes", "waited_out", "after_shutdown", "displaced"} {
		dropped += got[`shardedsink_dropped_total{reason="`+r+`",sink="bus"}`]
	}
	require.Equal(t, float64(pushed.Load()), got[`shardedsink_nats_pushed_values_total{sink="bus"}`])
	require.Equal(t, float64(st.Acked), got[`shardedsink_nats_acked_values_total{sink="bus"}`])
	require.Equal(t, float64(st.Failed), got[`shardedsink_nats_failed_values_total{sink="bus"}`])
	require.Equal(t, float64(st.Retried), got[`shardedsink_nats_retries_total{sink="bus"}`])
	require.Equal(t, float64(st.InFlight), got[`shardedsink_nats_in_flight_values{sink="bus"}`])
	require.Equal(t, float64(st.Dropped), dropped)
	require.Equal(t, got[`shardedsink_nats_pushed_values_total{sink="bus"}`],
		got[`shardedsink_nats_acked_values_total{sink="bus"}`]+got[`shardedsink_nats_failed_values_total{sink="bus"}`]+dropped)
	require.Equal(t, float64(st.Rings.Drained), got[`shardedsink_drained_total{sink="bus"}`])
}

// fakeSink is a sink's Stats for promsink's collector beside this one.
type fakeSink struct{ st sink.Stats }

func (f *fakeSink) Stats() sink.Stats { return f.st }
