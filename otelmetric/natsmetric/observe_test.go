package natsmetric_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/natssink/embedded"
	"github.com/shardedsink/shardedsink/otelmetric/internal/instrumentstest"
	"github.com/shardedsink/shardedsink/otelmetric/natsmetric"
	"github.com/shardedsink/shardedsink/sink"
	"github.com/shardedsink/shardedsink/sink/sinktest"
)

// fakeNATS returns fixed Stats in which every field has its own value, so
// that an instrument that reads the wrong field shows.
type fakeNATS struct{ st natssink.Stats }

func (f *fakeNATS) Stats() natssink.Stats { return f.st }

func TestObserveObservesItsCountsAndItsRings(t *testing.T) {
	mp, r := instrumentstest.NewReader(t)
	st := natssink.Stats{Name: "orders", Pushed: 341, Dropped: 33, Queued: 9, InFlight: 4, InFlightBytes: 640, Acked: 280,
		Duplicates: 2, Batched: 12, Failed: 15, Retried: 17, Rings: sinktest.TwoShards("orders")}
	_, err := natsmetric.Observe(mp, &fakeNATS{st})
	require.NoError(t, err)
	const n = "shardedsink.sink.name=orders"
	want := map[string]int64{
		"shardedsink.nats.pushed{" + n + "}":                     341,
		"shardedsink.nats.queued{" + n + "}":                     9,
		"shardedsink.nats.inflight{" + n + "}":                   4,
		"shardedsink.nats.inflight_bytes{" + n + "}":             640,
		"shardedsink.nats.batched{" + n + "}":                    12,
		"shardedsink.nats.exported{" + n + "}":                   280,
		"shardedsink.nats.exported{error.type=failed," + n + "}": 15,
		"shardedsink.nats.duplicates{" + n + "}":                 2,
		"shardedsink.nats.retries{" + n + "}":                    17,
	}
	for k, v := range instrumentstest.RingTotals {
		want[k] = v
	}
	require.Equal(t, want, instrumentstest.Values(instrumentstest.Collect(t, r)))
}

func TestANilMeterProviderIsRefused(t *testing.T) {
	_, err := natsmetric.Observe(nil, &fakeNATS{})
	require.EqualError(t, err, "natsmetric: MeterProvider is nil")
}

// A real natssink sink collected through the SDK's ManualReader while
// producers push: its counters never go down from one collection to the
// next, and once it has shut down a collection equals its Stats, every
// push counted once.
func TestCollectionsWhileProducersPushShowStatsOnceQuiet(t *testing.T) {
	ctx := context.Background()
	srv, err := embedded.Start("")
	require.NoError(t, err)
	defer srv.Stop()
	_, err = srv.JetStream.CreateStream(ctx, jetstream.StreamConfig{
		Name: "EVENTS", Subjects: []string{"events.>"}, Storage: jetstream.MemoryStorage})
	require.NoError(t, err)
	ns, err := natssink.New(srv.JetStream, natssink.Config[int]{Subject: "events.x",
		Encode: func(dst []byte, v int) ([]byte, error) { return strconv.AppendInt(dst, int64(v), 10), nil },
		Sink:   sink.Config[int]{Name: "bus", Shards: 2},
	})
	require.NoError(t, err)
	mp, r := instrumentstest.NewReader(t)
	_, err = natsmetric.Observe(mp, ns)
	require.NoError(t, err)

	var pushed, collections atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := 0; i < 500 || collections.Load() < 5; i++ {
				ns.Push(i)
				pushed.Add(1)
			}
		})
	}
	stop := instrumentstest.Watch(t, r, &collections)
	wg.Wait()
	stop()
	require.NoError(t, ns.Shutdown(ctx))

	got := instrumentstest.Values(instrumentstest.Collect(t, r))
	const bus = "shardedsink.sink.name=bus"
	st := ns.Stats()
	require.Equal(t, pushed.Load(), got["shardedsink.nats.pushed{"+bus+"}"])
	require.Equal(t, int64(st.Acked), got["shardedsink.nats.exported{"+bus+"}"])
	require.Equal(t, int64(st.Failed), got["shardedsink.nats.exported{error.type=failed,"+bus+"}"])
	require.Equal(t, int64(st.InFlight), got["shardedsink.nats.inflight{"+bus+"}"])
	var dropped int64
	for _, reason := range []string{"queue_full", "queue_bytes_full", "waited_out", "shutdown", "displaced"} {
		dropped += got["shardedsink.processed{error.type="+reason+","+bus+"}"]
	}
	require.Equal(t, int64(st.Dropped), dropped)
	require.Equal(t, got["shardedsink.nats.pushed{"+bus+"}"],
		got["shardedsink.nats.exported{"+bus+"}"]+got["shardedsink.nats.exported{error.type=failed,"+bus+"}"]+dropped)
}
