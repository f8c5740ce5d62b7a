package otelmetric_test

import (
	"log/slog"
	"time"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/sink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// fakeSink, fakeHandler and fakeNATS return fixed Stats in which every
// field has its own value, so that a series that reads the wrong field
// shows.
type fakeSink struct{ st sink.Stats }

func (f *fakeSink) Stats() sink.Stats { return f.st }

type fakeLog struct{ st logsink.Stats }

func (f *fakeLog) Stats() logsink.Stats { return f.st }

type fakeHandler struct{ st slogsink.Stats }

func (f *fakeHandler) Stats() slogsink.Stats { return f.st }

type fakeNATS struct{ st natssink.Stats }

func (f *fakeNATS) Stats() natssink.Stats { return f.st }

// twoShards is a sink.Stats of two shards whose totals are their sums.
func twoShards(name string) sink.Stats {
	per := []sink.ShardStats{
		{Shard: 0, Dropped: 11, Queued: 3, Drained: 100, DrainPanics: 1, DroppedForBytes: 4, QueuedBytes: 300, WaitedOut: 2, Waiting: 1,
			DroppedAfterShutdown: 1, Displaced: 2, HandOffs: 5, MaxDrainTime: 2 * time.Millisecond, MaxTakeLag: 7 * time.Millisecond},
		{Shard: 1, Dropped: 22, Queued: 5, Drained: 200, DrainPanics: 2, DroppedForBytes: 7, QueuedBytes: 500, WaitedOut: 3, Waiting: 4,
			DroppedAfterShutdown: 4, Displaced: 6, HandOffs: 6, MaxDrainTime: 3 * time.Millisecond, MaxTakeLag: 4 * time.Millisecond},
	}
	return sink.Stats{Name: name, Shards: 2, RingCapacity: 64, Dropped: 33, Queued: 8, Drained: 300,
		DrainPanics: 3, DroppedForBytes: 11, QueuedBytes: 800, WaitedOut: 5, Waiting: 5,
		DroppedAfterShutdown: 5, Displaced: 8, Overloads: 6, HandOffs: 11, MaxDrainTime: 3 * time.Millisecond,
		MaxTakeLag: 7 * time.Millisecond, PerShard: per}
}

func handlerStats() slogsink.Stats {
	return slogsink.Stats{Written: 1000, Dropped: 15, DroppedForBytes: 6, WaitedOut: 3,
		DroppedByLevel: map[slog.Level]uint64{slog.LevelDebug: 1, slog.LevelInfo: 2, slog.LevelError: 12},
		Errors:         7, Panics: 8, Abandoned: 9, Empty: 10}
}

func natsStats() natssink.Stats {
	return natssink.Stats{Name: "orders", Pushed: 341, Dropped: 33, Queued: 9, InFlight: 4, Acked: 280,
		Duplicates: 2, Failed: 15, Retried: 17, Rings: twoShards("orders")}
}
