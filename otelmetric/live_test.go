package otelmetric_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/natssink/embedded"
	"github.com/shardedsink/shardedsink/otelmetric"
	"github.com/shardedsink/shardedsink/otelmetric/natsmetric"
	"github.com/shardedsink/shardedsink/sink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// TestCollectionsWhileProducersPushShowStatsOnceQuiet collects a sink, a
// slogsink handler and a natssink sink through the SDK's ManualReader
// while producers push into all three; the counters never go down from
// one collection to the next, and once the producers are done and the
// sinks shut down, a collection equals each Stats, and every push is
// counted once.
func TestCollectionsWhileProducersPushShowStatsOnceQuiet(t *testing.T) {
	ctx := context.Background()
	s := sink.MustNew(sink.Config[int]{Name: "events", Shards: 4, RingCapacity: 64, Logger: slog.New(slog.DiscardHandler)},
		sink.ActionFunc[int](func(context.Context, []int) { time.Sleep(20 * time.Microsecond) }))
	h, err := slogsink.New(io.Discard, &slogsink.Options{Shards: 2, RingCapacity: 16, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	log := slog.New(h)
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

	mp, r := newReader(t)
	_, err = otelmetric.ObserveSink(mp, s)
	require.NoError(t, err)
	_, err = otelmetric.ObserveHandler(mp, h, "app")
	require.NoError(t, err)
	_, err = natsmetric.Observe(mp, ns)
	require.NoError(t, err)

	const producers, each = 4, 5000
	var pushed, accepted, logged, natsPushed, collections atomic.Int64
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := 0; i < each || collections.Load() < 5; i++ {
				pushed.Add(1)
				if s.Push(i) {
					accepted.Add(1)
				}
				if i%10 == 0 {
					log.Info("event", "p", p, "i", i)
					logged.Add(1)
				}
				if i%50 == 0 {
					ns.Push(i)
					natsPushed.Add(1)
				}
			}
		})
	}
	stop := make(chan struct{})
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		prev := map[string]point{}
		for {
			select {
			case <-stop:
				return
			default:
			}
			cur, err := collectErr(r)
			if !assert.NoError(t, err) {
				return
			}
			for k, p := range cur {
				if p.monotonic {
					assert.GreaterOrEqual(t, p.value, prev[k].value, "counter %s went down", k)
				}
			}
			prev = cur
			collections.Add(1)
		}
	}()
	wg.Wait()
	close(stop)
	<-collected
	require.GreaterOrEqual(t, collections.Load(), int64(5))

	require.NoError(t, s.Shutdown(ctx))
	require.NoError(t, h.Close(ctx))
	require.NoError(t, ns.Shutdown(ctx))
	got := values(collect(t, r))

	const ev, app, bus = "shardedsink.sink.name=events", "shardedsink.sink.name=app", "shardedsink.sink.name=bus"
	st := s.Stats()
	require.Equal(t, int64(st.Drained), got["shardedsink.processed{"+ev+"}"])
	require.Equal(t, int64(st.Dropped-st.DroppedForBytes-st.WaitedOut), got["shardedsink.processed{error.type=queue_full,"+ev+"}"])
	require.Equal(t, int64(st.WaitedOut), got["shardedsink.processed{error.type=waited_out,"+ev+"}"])
	require.Equal(t, int64(st.DroppedForBytes), got["shardedsink.processed{error.type=queue_bytes_full,"+ev+"}"])
	require.Equal(t, int64(st.Queued), got["shardedsink.queue.size{"+ev+"}"])
	require.Equal(t, pushed.Load(), got["shardedsink.processed{"+ev+"}"]+got["shardedsink.processed{error.type=queue_full,"+ev+"}"]+
		got["shardedsink.processed{error.type=queue_bytes_full,"+ev+"}"]+got["shardedsink.processed{error.type=waited_out,"+ev+"}"], "every push drained or dropped")
	require.Equal(t, accepted.Load(), got["shardedsink.processed{"+ev+"}"])

	hs := h.Stats()
	require.Equal(t, int64(hs.Written), got["shardedsink.slog.processed{"+app+"}"])
	var handled int64
	for k, v := range got {
		if strings.HasPrefix(k, "shardedsink.slog.processed{") {
			handled += v
		}
	}
	require.Equal(t, logged.Load(), handled+got["shardedsink.slog.empty{"+app+"}"], "every record in one place")

	nst := ns.Stats()
	require.Equal(t, natsPushed.Load(), got["shardedsink.nats.pushed{"+bus+"}"])
	require.Equal(t, int64(nst.Acked), got["shardedsink.nats.exported{"+bus+"}"])
	require.Equal(t, int64(nst.Failed), got["shardedsink.nats.exported{error.type=failed,"+bus+"}"])
	require.Equal(t, int64(nst.InFlight), got["shardedsink.nats.inflight{"+bus+"}"])
	require.Equal(t, got["shardedsink.nats.pushed{"+bus+"}"], got["shardedsink.nats.exported{"+bus+"}"]+
		got["shardedsink.nats.exported{error.type=failed,"+bus+"}"]+got["shardedsink.processed{error.type=queue_full,"+bus+"}"]+
		got["shardedsink.processed{error.type=queue_bytes_full,"+bus+"}"]+got["shardedsink.processed{error.type=waited_out,"+bus+"}"])
}
