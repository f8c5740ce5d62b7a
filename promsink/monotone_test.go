package promsink_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/promsink"
	"github.com/shardedsink/shardedsink/promsink/internal/seriestest"
	"github.com/shardedsink/shardedsink/sink"
	"github.com/shardedsink/shardedsink/sink/sinktest"
)

// A live sink drops for every reason (full rings, the byte budget,
// PushWaits that wait out, DropOldest displacing) while a scraper reads it
// through promhttp without pause: no _total series of a scrape is below
// the last scrape's. Before each drop was counted once, in its reason,
// dropped_total{reason="full"} went down between scrapes (7315 to 6251 in
// the run), which Prometheus reads as a counter reset.
func TestEveryCounterOnlyGrowsBetweenScrapes(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	var sinks []*sink.Sink[[]byte]
	for _, overflow := range []sink.Overflow{sink.DropNewest, sink.DropOldest} {
		s, err := sinktest.NewDropping(overflow)
		require.NoError(t, err)
		reg.MustRegister(promsink.NewSinkCollector(s, promsink.WithPerShard()))
		sinks = append(sinks, s)
	}
	url := seriestest.Serve(t, reg)
	stop := sinktest.Load(sinks...)
	var last map[string]float64
	scrapes := 0
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); scrapes++ {
		now := seriestest.Scrape(t, url)
		for name, v := range now {
			if !strings.Contains(name, "_total") {
				continue
			}
			if prev, ok := last[name]; ok && v < prev {
				stop()
				t.Fatalf("scrape %d: %s went from %v to %v", scrapes, name, prev, v)
			}
		}
		last = now
	}
	stop()
	for _, s := range sinks {
		require.NoError(t, s.Shutdown(context.Background()))
	}
	for _, reason := range []string{"full", "bytes", "waited_out", "displaced"} {
		found := false
		for name, v := range last {
			if strings.HasPrefix(name, "shardedsink_dropped_total") && strings.Contains(name, `reason="`+reason+`"`) && v > 0 {
				found = true
			}
		}
		require.True(t, found, "no drop with reason %s: the test does not test it", reason)
	}
	t.Logf("%d scrapes", scrapes)
}
