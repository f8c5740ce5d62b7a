package otelmetric_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/otelmetric"
	"github.com/shardedsink/shardedsink/otelmetric/internal/instrumentstest"
	"github.com/shardedsink/shardedsink/sink"
	"github.com/shardedsink/shardedsink/sink/sinktest"
)

// A live sink drops for every reason (full rings, the byte budget,
// PushWaits that wait out, DropOldest displacing) while the SDK's
// ManualReader collects without pause: no counter's point is below the
// last collection's. Before each drop was counted once, in its reason,
// processed{error.type=queue_full} went down (7742 to 7741 in the
// issue's run).
func TestEveryCounterOnlyGrowsBetweenCollections(t *testing.T) {
	mp, r := instrumentstest.NewReader(t)
	var sinks []*sink.Sink[[]byte]
	for _, overflow := range []sink.Overflow{sink.DropNewest, sink.DropOldest} {
		s, err := sinktest.NewDropping(overflow)
		require.NoError(t, err)
		_, err = otelmetric.ObserveSink(mp, s, otelmetric.WithPerShard())
		require.NoError(t, err)
		sinks = append(sinks, s)
	}
	stop := sinktest.Load(sinks...)
	var last map[string]instrumentstest.Point
	collections := 0
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); collections++ {
		now := instrumentstest.Collect(t, r)
		for name, p := range now {
			if prev, ok := last[name]; ok && p.Monotonic && p.Value < prev.Value {
				stop()
				t.Fatalf("collection %d: %s went from %d to %d", collections, name, prev.Value, p.Value)
			}
		}
		last = now
	}
	stop()
	for _, s := range sinks {
		require.NoError(t, s.Shutdown(context.Background()))
	}
	for _, reason := range []string{"queue_full", "queue_bytes_full", "waited_out", "displaced"} {
		found := false
		for name, p := range last {
			if strings.Contains(name, "error.type="+reason+",") && p.Value > 0 {
				found = true
			}
		}
		require.True(t, found, "no drop with error.type %s: the test does not test it", reason)
	}
	t.Logf("%d collections", collections)
}
