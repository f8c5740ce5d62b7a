package promsink_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/promsink"
	"github.com/shardedsink/shardedsink/promsink/internal/seriestest"
	"github.com/shardedsink/shardedsink/sink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// TestAScrapeWhileProducersPushShowsStatsOnceQuiet scrapes a sink, a
// slogsink handler over HTTP while producers push into both; the counters never go down from one scrape to the next,
// and once the producers are done and the sinks shut down, the scrape
// equals each Stats, and every push is counted once.
func TestAScrapeWhileProducersPushShowsStatsOnceQuiet(t *testing.T) {
	ctx := context.Background()
	var drained atomic.Int64
	s := sink.MustNew(sink.Config[int]{Name: "events", Shards: 4, RingCapacity: 64,
		Logger: slog.New(slog.DiscardHandler)},
		sink.ActionFunc[int](func(_ context.Context, batch []int) {
			time.Sleep(20 * time.Microsecond) // a slow consumer: some pushes are dropped
			drained.Add(int64(len(batch)))
		}))
	h, err := slogsink.New(io.Discard, &slogsink.Options{
		Buffering: logsink.Buffering{Shards: 2, RingCapacity: 16},
		Logger:    slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	log := slog.New(h)

	reg := prometheus.NewRegistry()
	reg.MustRegister(promsink.NewSinkCollector(s), promsink.NewHandlerCollector(h, "app"))
	url := seriestest.Serve(t, reg)

	const producers, each = 4, 5000
	var pushed, accepted, logged atomic.Int64
	var scrapes atomic.Int64
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			// At least each pushes, and on until a few scrapes have run.
			for i := 0; i < each || scrapes.Load() < 5; i++ {
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
	stop := seriestest.Watch(t, url, &scrapes)
	wg.Wait()
	stop()
	require.GreaterOrEqual(t, scrapes.Load(), int64(5))
	t.Logf("%d scrapes while the producers pushed", scrapes.Load())

	require.NoError(t, s.Shutdown(ctx))
	require.NoError(t, h.Close(ctx))

	const late = 7 // pushes after Shutdown: dropped, reason="after_shutdown"
	for i := range late {
		s.Push(i)
		pushed.Add(1)
	}

	got := seriestest.Scrape(t, url)
	st := s.Stats()
	dropped := func(sink string) float64 { // the sum over every reason
		var sum float64
		for _, r := range []string{"full", "bytes", "waited_out", "after_shutdown", "displaced"} {
			sum += got[`shardedsink_dropped_total{reason="`+r+`",sink="`+sink+`"}`]
		}
		return sum
	}
	require.Equal(t, float64(st.Drained), got[`shardedsink_drained_total{sink="events"}`])
	require.Equal(t, float64(st.DroppedForSlots()), got[`shardedsink_dropped_total{reason="full",sink="events"}`])
	require.Equal(t, float64(st.DroppedForBytes), got[`shardedsink_dropped_total{reason="bytes",sink="events"}`])
	require.Equal(t, float64(late), got[`shardedsink_dropped_total{reason="after_shutdown",sink="events"}`])
	require.Equal(t, float64(st.Dropped), dropped("events"))
	require.Equal(t, float64(st.Overloads), got[`shardedsink_overloads_total{sink="events"}`])
	require.Equal(t, float64(st.Queued), got[`shardedsink_queued_values{sink="events"}`])
	require.Equal(t, float64(st.Shards*st.RingCapacity), got[`shardedsink_capacity_values{sink="events"}`])
	// Nothing lost: every push is drained or dropped, and the scrape says so.
	require.Equal(t, float64(pushed.Load()), got[`shardedsink_drained_total{sink="events"}`]+dropped("events"))
	require.Equal(t, float64(accepted.Load()), got[`shardedsink_drained_total{sink="events"}`])
	require.Equal(t, accepted.Load(), drained.Load())

	hs := h.Stats()
	require.Equal(t, float64(hs.Written), got[`shardedsink_slog_written_records_total{sink="app"}`])
	require.Equal(t, float64(hs.DroppedByLevel[slog.LevelInfo]), got[`shardedsink_slog_dropped_records_total{level="info",sink="app"}`])
	require.Equal(t, float64(logged.Load()), got[`shardedsink_slog_written_records_total{sink="app"}`]+
		got[`shardedsink_slog_dropped_records_total{level="info",sink="app"}`]+got[`shardedsink_slog_failed_records_total{sink="app"}`]+
		got[`shardedsink_slog_abandoned_records_total{sink="app"}`]+got[`shardedsink_slog_empty_records_total{sink="app"}`])

	// The scrape is what testutil reads from the collectors themselves.
	require.NoError(t, testutil.ScrapeAndCompare(url, strings.NewReader(fmt.Sprintf(`
# HELP shardedsink_drained_total Values taken from the rings and handed to Drain (a Drain call still running included).
# TYPE shardedsink_drained_total counter
shardedsink_drained_total{sink="events"} %d
`, st.Drained)), "shardedsink_drained_total"))
}
