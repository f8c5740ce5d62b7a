package promsink_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/promsink"
	"github.com/shardedsink/shardedsink/promsink/natsprom"
	"github.com/shardedsink/shardedsink/sink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// serve serves reg through promhttp.Handler on a loopback port until the
// test ends, and returns the scrape URL.
func serve(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}),
		ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		<-done
		http.DefaultClient.CloseIdleConnections()
	})
	return "http://" + ln.Addr().String() + "/metrics"
}

// scrape fetches url and returns its samples, keyed by name and labels in
// the text format's order ("name{a=\"x\",b=\"y\"}").
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	out, err := fetch(url)
	require.NoError(t, err)
	return out
}

// fetch is scrape for any goroutine: it returns the error.
func fetch(url string) (map[string]float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			v := m.GetGauge().GetValue()
			if m.Counter != nil {
				v = m.GetCounter().GetValue()
			}
			out[name+"{"+strings.Join(ls, ",")+"}"] = v
		}
	}
	return out, nil
}

// TestAScrapeWhileProducersPushShowsStatsOnceQuiet scrapes a sink, a
// slogsink handler and a natssink sink over HTTP while producers push
// into all three; the counters never go down from one scrape to the next,
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
	h, err := slogsink.New(io.Discard, &slogsink.Options{Shards: 2, RingCapacity: 16,
		Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	log := slog.New(h)

	ns := natsSink(t, 2)

	reg := prometheus.NewRegistry()
	reg.MustRegister(promsink.NewSinkCollector(s), promsink.NewHandlerCollector(h, "app"), natsprom.NewCollector(ns))
	url := serve(t, reg)

	const producers, each = 4, 5000
	var pushed, accepted, logged, natsPushed atomic.Int64
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
				if i%50 == 0 {
					ns.Push(i)
					natsPushed.Add(1)
				}
			}
		})
	}
	stop := make(chan struct{})
	scraped := make(chan struct{})
	go func() {
		defer close(scraped)
		prev := map[string]float64{}
		for {
			select {
			case <-stop:
				return
			default:
			}
			cur, err := fetch(url)
			if !assert.NoError(t, err) {
				return
			}
			for k, v := range cur {
				if strings.Contains(k, "_total{") {
					assert.GreaterOrEqual(t, v, prev[k], "counter %s went down", k)
				}
			}
			prev = cur
			scrapes.Add(1)
		}
	}()
	wg.Wait()
	close(stop)
	<-scraped
	require.GreaterOrEqual(t, scrapes.Load(), int64(5))
	t.Logf("%d scrapes while the producers pushed", scrapes.Load())

	require.NoError(t, s.Shutdown(ctx))
	require.NoError(t, h.Close(ctx))
	require.NoError(t, ns.Shutdown(ctx))

	const late = 7 // pushes after Shutdown: dropped, reason="after_shutdown"
	for i := range late {
		s.Push(i)
		pushed.Add(1)
	}

	got := scrape(t, url)
	st := s.Stats()
	dropped := func(sink string) float64 { // the sum over every reason
		var sum float64
		for _, r := range []string{"full", "bytes", "waited_out", "after_shutdown", "displaced"} {
			sum += got[`shardedsink_dropped_total{reason="`+r+`",sink="`+sink+`"}`]
		}
		return sum
	}
	require.Equal(t, float64(st.Drained), got[`shardedsink_drained_total{sink="events"}`])
	require.Equal(t, float64(st.DroppedFull()), got[`shardedsink_dropped_total{reason="full",sink="events"}`])
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

	nst := ns.Stats()
	require.Equal(t, float64(natsPushed.Load()), got[`shardedsink_nats_pushed_values_total{sink="bus"}`])
	require.Equal(t, float64(nst.Acked), got[`shardedsink_nats_acked_values_total{sink="bus"}`])
	require.Equal(t, float64(nst.Failed), got[`shardedsink_nats_failed_values_total{sink="bus"}`])
	require.Equal(t, float64(nst.Retried), got[`shardedsink_nats_retries_total{sink="bus"}`])
	require.Equal(t, float64(nst.InFlight), got[`shardedsink_nats_in_flight_values{sink="bus"}`])
	require.Equal(t, float64(nst.Dropped), dropped("bus"))
	require.Equal(t, got[`shardedsink_nats_pushed_values_total{sink="bus"}`], got[`shardedsink_nats_acked_values_total{sink="bus"}`]+
		got[`shardedsink_nats_failed_values_total{sink="bus"}`]+dropped("bus"))

	// The scrape is what testutil reads from the collectors themselves.
	require.NoError(t, testutil.ScrapeAndCompare(url, strings.NewReader(fmt.Sprintf(`
# HELP shardedsink_drained_total Values taken from the rings and handed to Drain (a Drain call still running included).
# TYPE shardedsink_drained_total counter
shardedsink_drained_total{sink="bus"} %d
shardedsink_drained_total{sink="events"} %d
`, nst.Rings.Drained, st.Drained)), "shardedsink_drained_total"))
}
