// Package sinktest is test support for code that reads a [sink.Sink]'s
// Stats while it runs (a metrics exporter, a status page): a sink that
// drops values for every reason it can at once ([NewDropping]), and a
// load that keeps it dropping ([Load]), so that a test can check that
// what it reports only grows while the counters move under it. This
// repository's sink, promsink and otelmetric tests use it; it is not for
// production code.
package sinktest

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/sink"
)

// NewDropping returns a sink under overflow that drops for every reason
// it can: a small ring and a slow Drain (full rings, or under
// [sink.DropOldest] displaced values), a byte budget that the pushes'
// sizes spend, and no hand-off (a push into a full ring sheds at once).
// Drive it with [Load]; shut it down when the test ends.
func NewDropping(overflow sink.Overflow) (*sink.Sink[[]byte], error) {
	return sink.New(sink.Config[[]byte]{
		Name: overflow.String(), Shards: 2, RingCapacity: 16, BatchSize: 4, Overflow: overflow,
		Logger: slog.New(slog.DiscardHandler), OverloadInterval: time.Millisecond, DisableHandOff: true,
		SizeOf: func(b []byte) int { return len(b) }, MaxQueuedBytes: 2 * 1024,
	}, sink.ActionFunc[[]byte](func(context.Context, [][]byte) { time.Sleep(50 * time.Microsecond) }))
}

// Load pushes into every sink from two goroutines each, until the
// returned stop is called (which waits for them): small and large
// values, and from one goroutine a PushWait in three whose ctx ends after
// 20 µs, so that some wait out.
func Load(sinks ...*sink.Sink[[]byte]) (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	for _, s := range sinks {
		for p := range 2 {
			wg.Go(func() {
				small, big := make([]byte, 8), make([]byte, 512)
				for i := 0; !done.Load(); i++ {
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
	return func() {
		done.Store(true)
		wg.Wait()
	}
}
