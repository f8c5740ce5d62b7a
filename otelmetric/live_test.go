package otelmetric_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/otelmetric"
	"github.com/shardedsink/shardedsink/otelmetric/internal/instrumentstest"
	"github.com/shardedsink/shardedsink/sink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// TestCollectionsWhileProducersPushShowStatsOnceQuiet collects a sink, a
// slogsink handler through the SDK's ManualReader while producers push
// into both; the counters never go down from
// one collection to the next, and once the producers are done and the
// sinks shut down, a collection equals each Stats, and every push is
// counted once.
func TestCollectionsWhileProducersPushShowStatsOnceQuiet(t *testing.T) {
	ctx := context.Background()
	s := sink.MustNew(sink.Config[int]{Name: "events", Shards: 4, RingCapacity: 64, Logger: slog.New(slog.DiscardHandler)},
		sink.ActionFunc[int](func(context.Context, []int) { time.Sleep(20 * time.Microsecond) }))
	h, err := slogsink.New(io.Discard, &slogsink.Options{Buffering: logsink.Buffering{Shards: 2, RingCapacity: 16}, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	log := slog.New(h)
	mp, r := instrumentstest.NewReader(t)
	_, err = otelmetric.ObserveSink(mp, s)
	require.NoError(t, err)
	_, err = otelmetric.ObserveHandler(mp, h, "app")
	require.NoError(t, err)

	const producers, each = 4, 5000
	var pushed, accepted, logged, collections atomic.Int64
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
			}
		})
	}
	stop := instrumentstest.Watch(t, r, &collections)
	wg.Wait()
	stop()
	require.GreaterOrEqual(t, collections.Load(), int64(5))

	require.NoError(t, s.Shutdown(ctx))
	require.NoError(t, h.Close(ctx))
	got := instrumentstest.Values(instrumentstest.Collect(t, r))

	const ev, app = "shardedsink.sink.name=events", "shardedsink.sink.name=app"
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
}
