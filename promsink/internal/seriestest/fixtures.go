package seriestest

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// RingTotals is the exposition of sinktest.TwoShards("orders")'s series in
// total.
const RingTotals = `
# HELP shardedsink_capacity_values Slots of the rings: the most values they hold.
# TYPE shardedsink_capacity_values gauge
shardedsink_capacity_values{sink="orders"} 128
# HELP shardedsink_drain_panics_total Drain calls that panicked or called runtime.Goexit; each lost its batch.
# TYPE shardedsink_drain_panics_total counter
shardedsink_drain_panics_total{sink="orders"} 3
# HELP shardedsink_drained_total Values taken from the rings and handed to Drain (a Drain call still running included).
# TYPE shardedsink_drained_total counter
shardedsink_drained_total{sink="orders"} 300
# HELP shardedsink_dropped_total Values dropped, by reason: full (every ring tried was full in slots), bytes (MaxQueuedBytes spent), waited_out (a PushWait whose context ended before room came), after_shutdown (pushed once Shutdown had begun), displaced (pushed out of a full ring by DropOldest), disk (the spill tier was full or off, or lost the value).
# TYPE shardedsink_dropped_total counter
shardedsink_dropped_total{reason="after_shutdown",sink="orders"} 5
shardedsink_dropped_total{reason="bytes",sink="orders"} 11
shardedsink_dropped_total{reason="disk",sink="orders"} 3
shardedsink_dropped_total{reason="displaced",sink="orders"} 8
shardedsink_dropped_total{reason="full",sink="orders"} 1
shardedsink_dropped_total{reason="waited_out",sink="orders"} 5
# HELP shardedsink_hand_offs_total Pushes that found their ring full while Drain was not slow and parked for the drain worker (Config.HandOffWait), whether they then went in or were dropped.
# TYPE shardedsink_hand_offs_total counter
shardedsink_hand_offs_total{sink="orders"} 11
# HELP shardedsink_max_drain_time_seconds The longest Drain call of the last one or two OverloadIntervals, one running included: the destination's time. Long while rings fill: a slow destination.
# TYPE shardedsink_max_drain_time_seconds gauge
shardedsink_max_drain_time_seconds{sink="orders"} 0.003
# HELP shardedsink_max_worker_delay_seconds The longest a drain worker took, lately, to come back to its ring after a Drain call returned with values still queued. Long while the longest Drain call is short: workers short of CPU.
# TYPE shardedsink_max_worker_delay_seconds gauge
shardedsink_max_worker_delay_seconds{sink="orders"} 0.007
# HELP shardedsink_overloads_total Overload reports of the sink's monitor: checks, one per OverloadInterval at most, that found values dropped since the one before (events, not values).
# TYPE shardedsink_overloads_total counter
shardedsink_overloads_total{sink="orders"} 6
# HELP shardedsink_queued_bytes Sizes (Config.SizeOf) of the values in the rings and in batches whose Drain has not returned; 0 without MaxQueuedBytes.
# TYPE shardedsink_queued_bytes gauge
shardedsink_queued_bytes{sink="orders"} 800
# HELP shardedsink_queued_values Values waiting in the rings (not those already in a batch being drained).
# TYPE shardedsink_queued_values gauge
shardedsink_queued_values{sink="orders"} 8
# HELP shardedsink_recovered_total Values an earlier sink on the spill directory left, handed to Drain by this one.
# TYPE shardedsink_recovered_total counter
shardedsink_recovered_total{sink="orders"} 7
# HELP shardedsink_shards Shards (rings, each with its drain worker) of the sink.
# TYPE shardedsink_shards gauge
shardedsink_shards{sink="orders"} 2
# HELP shardedsink_spill_bytes Bytes of the spill tier's files.
# TYPE shardedsink_spill_bytes gauge
shardedsink_spill_bytes{sink="orders"} 4096
# HELP shardedsink_spill_corrupt_total Torn or corrupt spill segments, and undecodable records of an earlier sink, that were skipped.
# TYPE shardedsink_spill_corrupt_total counter
shardedsink_spill_corrupt_total{sink="orders"} 2
# HELP shardedsink_spill_drained_total Spilled values read back from disk and handed to Drain.
# TYPE shardedsink_spill_drained_total counter
shardedsink_spill_drained_total{sink="orders"} 90
# HELP shardedsink_spill_errors_total Failed disk and Codec operations of the spill tier.
# TYPE shardedsink_spill_errors_total counter
shardedsink_spill_errors_total{sink="orders"} 1
# HELP shardedsink_spill_lost_total Values the spill tier lost (a failed write's, a Codec's error, a corrupt record's): of those dropped for the disk.
# TYPE shardedsink_spill_lost_total counter
shardedsink_spill_lost_total{sink="orders"} 1
# HELP shardedsink_spill_queued_values Values the spill tier holds on disk for Drain.
# TYPE shardedsink_spill_queued_values gauge
shardedsink_spill_queued_values{sink="orders"} 5
# HELP shardedsink_spilled_total Values moved from the rings to the spill tier on disk (Config.Spill) while Drain was slow.
# TYPE shardedsink_spilled_total counter
shardedsink_spilled_total{sink="orders"} 100
# HELP shardedsink_waiting_pushes PushWait calls parked for room at the snapshot.
# TYPE shardedsink_waiting_pushes gauge
shardedsink_waiting_pushes{sink="orders"} 5
`

// Serve serves reg through promhttp.Handler on a loopback port until the
// test ends, and returns the scrape URL.
func Serve(t *testing.T, reg *prometheus.Registry) string {
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

// Scrape fetches url and returns its samples, keyed by name and labels in
// the text format's order ("name{a=\"x\",b=\"y\"}").
func Scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	out, err := Fetch(url)
	require.NoError(t, err)
	return out
}

// Fetch is Scrape for any goroutine: it returns the error.
func Fetch(url string) (map[string]float64, error) {
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

// Watch scrapes url over and over on a goroutine of its own, checking
// that no counter (a series whose name ends in _total) goes down from one
// scrape to the next, and counting the scrapes in scrapes, until the
// returned stop is called; stop waits for the goroutine.
func Watch(t *testing.T, url string, scrapes *atomic.Int64) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		prev := map[string]float64{}
		for {
			select {
			case <-quit:
				return
			default:
			}
			cur, err := Fetch(url)
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
	return func() { close(quit); <-done }
}
