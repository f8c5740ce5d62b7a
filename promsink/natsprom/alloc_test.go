package natsprom_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/natssink/embedded"
	"github.com/shardedsink/shardedsink/promsink"
	"github.com/shardedsink/shardedsink/promsink/natsprom"
	"github.com/shardedsink/shardedsink/sink"
)

// A scrape of a natssink sink reads it with ReadStats into a pooled Stats:
// Collect allocates only the slice of the metrics it sends, with or
// without per-shard series, and a failure's text is made once, not per
// scrape.
func TestTheNATSCollectorAllocatesOnlyItsMetrics(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops what is put back under the race detector")
	}
	ns := natsSink(t, 4)
	for i := range 100 {
		ns.Push(i)
	}
	require.NoError(t, ns.Shutdown(context.Background()))

	for _, per := range []bool{false, true} {
		var opts []promsink.Option
		if per {
			opts = append(opts, promsink.WithPerShard())
		}
		c := natsprom.NewCollector(ns, opts...)
		ch := make(chan prometheus.Metric, 1024)
		collect := func() {
			c.Collect(ch)
			for len(ch) > 0 {
				<-ch
			}
		}
		collect()
		require.LessOrEqual(t, testing.AllocsPerRun(50, collect), 1.0, "per-shard=%t", per)
	}
}

// natsSink returns a natssink sink named "bus" of shards shards, into the
// stream EVENTS (subjects events.>) of an embedded server that stops when
// the test ends. Its values are ints, written in decimal.
func natsSink(t *testing.T, shards int) *natssink.Sink[int] {
	t.Helper()
	srv, err := embedded.Start("")
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	_, err = srv.JetStream.CreateStream(context.Background(), jetstream.StreamConfig{
		Name: "EVENTS", Subjects: []string{"events.>"}, Storage: jetstream.MemoryStorage})
	require.NoError(t, err)
	ns, err := natssink.New(srv.JetStream, natssink.Config[int]{Subject: "events.x",
		Encode: func(dst []byte, v int) ([]byte, error) { return strconv.AppendInt(dst, int64(v), 10), nil },
		Sink:   sink.Config[int]{Name: "bus", Shards: shards},
	})
	require.NoError(t, err)
	return ns
}
