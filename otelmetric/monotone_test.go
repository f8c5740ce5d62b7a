package otelmetric_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/otelmetric"
	"github.com/shardedsink/shardedsink/sink"
)

// A live sink drops for every reason (full rings, the byte budget,
// PushWaits that wait out, DropOldest displacing) while the SDK's
// ManualReader collects without pause: no counter's point is below the
// last collection's. Before each drop was counted once, in its reason,
// processed{error.type=queue_full} went down (7742 to 7741 in the
// issue's run).
func TestEveryCounterOnlyGrowsBetweenCollections(t *testing.T) {
	mp, r := newReader(t)
	var sinks []*sink.Sink[[]byte]
	for _, overflow := range []sink.Overflow{sink.DropNewest, sink.DropOldest} {
		s, err := sink.New(sink.Config[[]byte]{
			Name: overflow.String(), Shards: 2, RingCapacity: 16, BatchSize: 4, Overflow: overflow,
			Logger: slog.New(slog.DiscardHandler), OverloadInterval: time.Millisecond, DisableHandOff: true,
			SizeOf: func(b []byte) int { return len(b) }, MaxQueuedBytes: 2 * 1024,
		}, sink.ActionFunc[[]byte](func(context.Context, [][]byte) { time.Sleep(50 * time.Microsecond) }))
		require.NoError(t, err)
		_, err = otelmetric.ObserveSink(mp, s, otelmetric.WithPerShard())
		require.NoError(t, err)
		sinks = append(sinks, s)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for _, s := range sinks {
		for p := range 2 {
			wg.Go(func() {
				small, big := make([]byte, 8), make([]byte, 512)
				for i := 0; !stop.Load(); i++ {
					switch {
					case p == 0 && i%3 == 0:
						ctx, cancel := context.WithTimeout(context.Background(), 20*time.Microsecond)
						_ = s.PushWait(ctx, small)
						cancel()
					case i%2 == 0:
						s.Push(big)
					default:
						s.Push(small)
					}
				}
			})
		}
	}
	var last map[string]point
	collections := 0
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); collections++ {
		now := collect(t, r)
		for name, p := range now {
			if prev, ok := last[name]; ok && p.monotonic && p.value < prev.value {
				stop.Store(true)
				wg.Wait()
				t.Fatalf("collection %d: %s went from %d to %d", collections, name, prev.value, p.value)
			}
		}
		last = now
	}
	stop.Store(true)
	wg.Wait()
	for _, s := range sinks {
		require.NoError(t, s.Shutdown(context.Background()))
	}
	for _, reason := range []string{"queue_full", "queue_bytes_full", "waited_out", "displaced"} {
		found := false
		for name, p := range last {
			if strings.Contains(name, "error.type="+reason+",") && p.value > 0 {
				found = true
			}
		}
		require.True(t, found, "no drop with error.type %s: the test does not test it", reason)
	}
	t.Logf("%d collections", collections)
}
