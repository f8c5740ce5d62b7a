package promsink_test

import (
	"log/slog"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/sink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// fakeSink, fakeHandler and fakeLog return fixed Stats in which every
// field has its own value, so that a series that reads the wrong field
// shows.
type fakeSink struct{ st sink.Stats }

func (f *fakeSink) Stats() sink.Stats { return f.st }

type fakeHandler struct{ st slogsink.Stats }

func (f *fakeHandler) Stats() slogsink.Stats { return f.st }

type fakeLog struct{ st logsink.Stats }

func (f *fakeLog) Stats() logsink.Stats { return f.st }

func handlerStats() slogsink.Stats {
	return slogsink.Stats{Written: 1000, Dropped: 15, DroppedForBytes: 6, WaitedOut: 3,
		DroppedByLevel: map[slog.Level]uint64{slog.LevelDebug: 1, slog.LevelInfo: 2, slog.LevelError: 12},
		Errors:         7, Panics: 8, Abandoned: 9, Empty: 10,
		Spilled: 400, Recovered: 20, LostOnDisk: 2, OnDisk: 30}
}
