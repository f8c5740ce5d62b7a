package logsink_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/logsink"
)

// heldWriter is a destination whose Writes block until release is closed;
// started receives once when the first Write begins.
type heldWriter struct {
	release chan struct{}
	started chan struct{}
	once    sync.Once
	mu      sync.Mutex
	b       bytes.Buffer
}

func (h *heldWriter) Write(p []byte) (int, error) {
	h.once.Do(func() { close(h.started) })
	<-h.release
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.b.Write(p)
}

// An empty record is counted in Stats.Empty whatever the ring's state:
// 320 empty Writes, at every level and through every way in (Writer.Write,
// Writer.WriteLevel, Stream.Write, Stream.WriteLevel), into a ring that is
// full, its worker held in a Write, are all counted in Empty, none in
// Dropped nor in a drop report; and so are empty Writes after Close.
// (Before, WriteLevel ran Begin's admission first: every one that found
// the ring full was counted as a dropped record and reported as one.)
func TestEmptyWritesIntoAFullRingAreCountedInEmpty(t *testing.T) {
	dst := &heldWriter{release: make(chan struct{}), started: make(chan struct{})}
	// KeepWait off and no hand-off: a record that finds the ring full is
	// shed at once, at every level.
	w, err := logsink.New(dst, &logsink.Options{Buffering: logsink.Buffering{Shards: 1, RingCapacity: 8, BatchSize: 8, MaxDelay: -1, KeepWait: -1, DisableHandOff: true}})
	require.NoError(t, err)
	released := false
	release := func() {
		if !released {
			released = true
			close(dst.release)
		}
	}
	defer func() {
		release()
		_ = w.Close(context.Background())
	}()

	_, _ = w.Write([]byte("first\n"))
	select {
	case <-dst.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker never began its Write")
	}
	// Fill the ring, reserve included: records shed at both levels.
	for range 64 {
		_, _ = w.WriteLevel(slog.LevelInfo, []byte("info\n"))
		_, _ = w.WriteLevel(slog.LevelError, []byte("error\n"))
	}
	full := w.Stats()
	require.NotZero(t, full.DroppedByLevel[slog.LevelInfo], "the ring never filled for INFO: %+v", full)
	require.NotZero(t, full.DroppedByLevel[slog.LevelError], "the ring never filled for ERROR: %+v", full)

	s := w.Stream()
	levels := []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError}
	const empties = 320
	for i := range empties {
		var n int
		var err error
		switch l := levels[i/4%len(levels)]; i % 4 {
		case 0:
			n, err = w.Write(nil)
		case 1:
			n, err = w.WriteLevel(l, []byte{})
		case 2:
			n, err = s.Write([]byte{})
		default:
			n, err = s.WriteLevel(l, nil)
		}
		require.NoError(t, err)
		require.Zero(t, n)
	}
	st := w.Stats()
	t.Logf("after %d empty Writes: Empty %d, Dropped %d (%d before)", empties, st.Empty, st.Dropped, full.Dropped)
	require.Equal(t, uint64(empties), st.Empty, "empty Writes into a full ring counted in Empty")
	require.Equal(t, full.Dropped, st.Dropped, "empty Writes into a full ring counted as dropped")
	require.Equal(t, full.DroppedByLevel, st.DroppedByLevel)

	release()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, w.Close(ctx))
	for range 10 {
		_, _ = w.Write(nil)
		_, _ = s.WriteLevel(slog.LevelError, nil)
	}
	st = w.Stats()
	require.Equal(t, uint64(empties+20), st.Empty, "empty Writes after Close counted in Empty")
	require.Equal(t, full.Dropped, st.Dropped, "empty Writes counted as dropped")

	// The drop reports count the records shed, not one empty Write.
	var reported uint64
	dst.mu.Lock()
	lines := bufio.NewScanner(bytes.NewReader(dst.b.Bytes()))
	dst.mu.Unlock()
	for lines.Scan() {
		var report struct {
			Msg     string `json:"msg"`
			Dropped uint64 `json:"dropped"`
		}
		if json.Unmarshal(lines.Bytes(), &report) == nil && report.Msg == logsink.DroppedMessage {
			reported += report.Dropped
		}
	}
	require.Equal(t, full.Dropped, reported, "the drop reports' total")
}
