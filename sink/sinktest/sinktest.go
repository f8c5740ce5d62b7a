// Package sinktest is test support for code that reads a [sink.Sink]'s
// Stats (a metrics exporter, a status page): a sink that drops values for
// every reason it can at once ([NewDropping]) and a load that keeps it
// dropping ([Load]), so that a test can check that what it reports only
// grows while the counters move under it; and a fixed Stats whose every
// field has a value of its own ([TwoShards]), so that a figure read from
// the wrong field shows. This repository's sink, promsink and otelmetric
// tests use it; it is not for production code.
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

// TwoShards returns a [sink.Stats] named name of two shards in which every
// field has a value of its own, and whose totals are the shards' sums (the
// larger of the two, for MaxDrainTime and MaxWorkerDelay).
func TwoShards(name string) sink.Stats {
	per := []sink.ShardStats{
		{Shard: 0, Dropped: 11, Queued: 3, Drained: 100, DrainPanics: 1, DroppedForBytes: 4, QueuedBytes: 300, WaitedOut: 2, Waiting: 1,
			DroppedAfterShutdown: 1, Displaced: 2, HandOffs: 5, MaxDrainTime: 2 * time.Millisecond, MaxWorkerDelay: 7 * time.Millisecond,
			DroppedForDisk: 1, Spilled: 40, SpillQueued: 2},
		{Shard: 1, Dropped: 22, Queued: 5, Drained: 200, DrainPanics: 2, DroppedForBytes: 7, QueuedBytes: 500, WaitedOut: 3, Waiting: 4,
			DroppedAfterShutdown: 4, Displaced: 6, HandOffs: 6, MaxDrainTime: 3 * time.Millisecond, MaxWorkerDelay: 4 * time.Millisecond,
			DroppedForDisk: 2, Spilled: 60, SpillQueued: 3},
	}
	return sink.Stats{Name: name, Shards: 2, RingCapacity: 64, Dropped: 33, Queued: 8, Drained: 300,
		DrainPanics: 3, DroppedForBytes: 11, QueuedBytes: 800, WaitedOut: 5, Waiting: 5,
		DroppedAfterShutdown: 5, Displaced: 8, Overloads: 6, HandOffs: 11, MaxDrainTime: 3 * time.Millisecond,
		MaxWorkerDelay: 7 * time.Millisecond, DroppedForDisk: 3, Spilled: 100, SpillQueued: 5, SpillBytes: 4096, SpillLost: 1,
		SpillDrained: 90, Recovered: 7, SpillErrors: 1, SpillCorrupt: 2, PerShard: per}
}
