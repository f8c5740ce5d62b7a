package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardedsink/shardedsink/sink"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// syncBuffer records each Write separately.
type syncBuffer struct {
	mu     sync.Mutex
	writes [][]byte
	gate   chan struct{} // when set, each Write waits for it to be closed
	err    error
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	if b.gate != nil {
		<-b.gate
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes = append(b.writes, bytes.Clone(p))
	return len(p), b.err
}

func (b *syncBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, w := range b.writes {
		out = append(out, strings.Split(strings.TrimSuffix(string(w), "\n"), "\n")...)
	}
	return out
}

func (b *syncBuffer) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.writes)
}

// noTime drops the time attribute, so that lines can be compared.
func noTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

func newHandler(t *testing.T, w *syncBuffer, cfg sink.Config[entry]) *Handler {
	t.Helper()
	h, err := NewHandler(w, Options{Handler: slog.HandlerOptions{ReplaceAttr: noTime}, Sink: cfg})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

func TestHandlerWritesWhatTheTextHandlerWrites(t *testing.T) {
	var got syncBuffer
	h := newHandler(t, &got, sink.Config[entry]{Shards: 1})
	var want bytes.Buffer
	ref := slog.NewTextHandler(&want, &slog.HandlerOptions{ReplaceAttr: noTime})

	for _, lg := range []*slog.Logger{slog.New(h), slog.New(ref)} {
		lg.Info("plain", "n", 1)
		lg.With("svc", "cart").WithGroup("req").Info("grouped", "id", 7, slog.Group("user", "name", "ann"))
		lg.WithGroup("a").With("x", 1).WithGroup("b").Warn("nested", "y", 2)
		lg.Debug("below the level")
		lg.Error("many attrs", "a", 1, "b", 2, "c", 3, "d", 4, "e", 5, "f", 6, "g", 7)
	}
	require.NoError(t, h.Flush(context.Background()))
	require.Equal(t, strings.Split(strings.TrimSuffix(want.String(), "\n"), "\n"), got.lines())
}

func TestHandlerWritesInBatches(t *testing.T) {
	var got syncBuffer
	got.gate = make(chan struct{})
	h := newHandler(t, &got, sink.Config[entry]{Shards: 2, RingCapacity: 2048, BatchSize: 256})
	lg := slog.New(h)
	for i := range 1000 {
		lg.Info("record", "i", i)
	}
	close(got.gate) // the workers were held in their first Write
	require.NoError(t, h.Flush(context.Background()))
	lines := got.lines()
	require.Len(t, lines, 1000)
	require.Less(t, got.count(), 20, "1000 records in %d writes", got.count())
	require.Zero(t, h.Dropped())
}

func TestHandlerNeverBlocksAndShedsUnderOverload(t *testing.T) {
	var got syncBuffer
	got.gate = make(chan struct{}) // a writer that does not return
	h := newHandler(t, &got, sink.Config[entry]{Shards: 2, RingCapacity: 16, BatchSize: 4})
	lg := slog.New(h)
	start := time.Now()
	const n = 10000
	for i := range n {
		lg.Info("record", "i", i)
	}
	require.Less(t, time.Since(start), 5*time.Second, "logging did not wait for the writer")
	require.Positive(t, h.Dropped())
	close(got.gate)
	require.NoError(t, h.Close(context.Background()))
	require.Equal(t, n, len(got.lines())+int(h.Dropped()), "every record written or counted as shed")
}

func TestHandlerKeepsLinesWholeUnderConcurrency(t *testing.T) {
	var got syncBuffer
	h := newHandler(t, &got, sink.Config[entry]{Shards: 4, RingCapacity: 8192})
	lg := slog.New(h)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			l := lg.With("g", g)
			for i := range 200 {
				l.Info("concurrent", "i", i)
			}
		})
	}
	wg.Wait()
	require.NoError(t, h.Flush(context.Background()))
	lines := got.lines()
	require.Len(t, lines, 1600)
	for _, l := range lines {
		require.Regexp(t, `^level=INFO msg=concurrent g=\d i=\d+$`, l)
	}
	require.Equal(t, len(lines), len(slices.Compact(slices.Sorted(slices.Values(lines)))), "no line twice")
}

func TestHandlerEnabledFollowsLevel(t *testing.T) {
	h, err := NewHandler(&syncBuffer{}, Options{Handler: slog.HandlerOptions{Level: slog.LevelWarn}})
	require.NoError(t, err)
	defer h.Close(context.Background())
	require.False(t, h.Enabled(context.Background(), slog.LevelInfo))
	require.True(t, h.Enabled(context.Background(), slog.LevelWarn))
}

func TestHandlerCountsFailedWrites(t *testing.T) {
	got := &syncBuffer{err: errors.New("disk full")}
	h := newHandler(t, got, sink.Config[entry]{Shards: 1})
	slog.New(h).Info("lost")
	require.NoError(t, h.Flush(context.Background()))
	require.Equal(t, uint64(1), h.FailedWrites())
}

func TestNewHandlerRejectsABadSinkConfig(t *testing.T) {
	_, err := NewHandler(&syncBuffer{}, Options{Sink: sink.Config[entry]{Shards: -1}})
	require.ErrorIs(t, err, sink.ErrInvalidConfig)
}
