package slogsink_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/slogsink"
)

func TestWarningsAreNotDroppedWhileInfoRecordsAre(t *testing.T) {
	for _, keep := range []slog.Leveler{nil, slog.LevelError} {
		t.Run("KeepLevel="+levelName(keep), func(t *testing.T) {
			// A held writer: the ring fills with INFO records and sheds
			// them; the reserve still takes the records at or above
			// KeepLevel, the report riding in the first one's slot.
			got := writes{gate: make(chan struct{})}
			h := newHandler(t, &got, &slogsink.Options{Buffering: logsink.Buffering{Shards: 1, RingCapacity: 64, BatchSize: 1}, KeepLevel: keep})
			lg := slog.New(h)
			for i := range 200 {
				lg.Info("routine", "i", i)
			}
			kept := slog.LevelWarn
			if keep != nil {
				kept = keep.Level()
				lg.Warn("shed like INFO") // below this KeepLevel
			}
			for i := range 8 { // the reserve of 8
				lg.Log(context.Background(), kept, "important", "i", i)
			}
			st := h.Stats()
			require.Positive(t, st.DroppedByLevel[slog.LevelInfo])
			require.Zero(t, st.DroppedByLevel[kept], "a record at KeepLevel was dropped while INFO records were: %+v", st)
			close(got.gate)
			require.NoError(t, h.Close(context.Background()))

			var important int
			reported := map[string]uint64{}
			for _, l := range got.lines() {
				var m struct {
					Msg     string            `json:"msg"`
					ByLevel map[string]uint64 `json:"dropped_by_level"`
				}
				require.NoError(t, json.Unmarshal([]byte(l), &m))
				switch m.Msg {
				case "important":
					important++
				case slogsink.DroppedMessage:
					for l, n := range m.ByLevel {
						reported[l] += n
					}
				}
			}
			require.Equal(t, 8, important)
			final := h.Stats()
			want := map[string]uint64{}
			for l, n := range final.DroppedByLevel {
				want[l.String()] = n
			}
			require.Equal(t, want, reported, "the reports name the levels that lost records")
			require.Equal(t, uint64(200+8+boolInt(keep != nil)), final.Written+final.Dropped)
		})
	}
}

func TestDropsAreCountedByLevel(t *testing.T) {
	got := writes{gate: make(chan struct{})}
	h := newHandler(t, &got, &slogsink.Options{Buffering: logsink.Buffering{Shards: 1, RingCapacity: 8, BatchSize: 1}, Level: slog.LevelDebug - 4})
	lg := slog.New(h)
	var wg sync.WaitGroup
	for _, l := range []slog.Level{slog.LevelDebug - 2, slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError, slog.LevelError + 8} {
		wg.Go(func() {
			for range 100 {
				lg.Log(context.Background(), l, "r")
			}
		})
	}
	wg.Wait()
	st := h.Stats()
	var sum uint64
	for l, n := range st.DroppedByLevel {
		require.Contains(t, []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError}, l)
		sum += n
	}
	require.Equal(t, st.Dropped, sum)
	require.Positive(t, st.DroppedByLevel[slog.LevelDebug], "the levels below INFO count as DEBUG")
	require.Positive(t, st.DroppedByLevel[slog.LevelError], "the levels from ERROR up count as ERROR")
	close(got.gate)
	require.NoError(t, h.Close(context.Background()))
	final := h.Stats()
	require.Equal(t, uint64(600), final.Written+final.Dropped)
	_, reported := tally(parse(t, got.lines()))
	require.Equal(t, final.Dropped, reported)
}

func levelName(l slog.Leveler) string {
	if l == nil {
		return "default"
	}
	return l.Level().String()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// heldWriter blocks every Write until release is closed, and says on
// entered when the first Write has begun.
type heldWriter struct {
	entered chan struct{}
	once    sync.Once
	release chan struct{}
	writes
}

func (w *heldWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.entered) })
	<-w.release
	return w.writes.Write(p)
}

func TestTheReserveHoldsWarningsOnlyWhileInfoAndWarnInterleave(t *testing.T) {
	// A stall: the worker is in a Write that does not return, the ring
	// fills with INFO records to the reserve, and then INFO and WARN
	// interleave. Each WARN follows a drop, so each carries a drop report;
	// the reports must not take the reserve's slots.
	const ring, reserve = 64, 64 / 8
	w := &heldWriter{entered: make(chan struct{}), release: make(chan struct{})}
	h, err := slogsink.New(w, &slogsink.Options{Buffering: logsink.Buffering{Shards: 1, RingCapacity: ring, BatchSize: 1}})
	require.NoError(t, err)
	lg := slog.New(h)
	lg.Info("taken by the worker")
	<-w.entered
	for i := range ring - reserve {
		lg.Info("fills the ring", "i", i)
	}
	require.Zero(t, h.Dropped(), "the ring holds %d records below the reserve", ring-reserve)
	for i := range 20 {
		lg.Info("shed")
		lg.Warn("important", "i", i)
	}
	st := h.Stats()
	require.Equal(t, uint64(20), st.DroppedByLevel[slog.LevelInfo])
	require.Equal(t, uint64(20-reserve), st.DroppedByLevel[slog.LevelWarn],
		"the reserve of %d slots keeps %d warnings: %+v", reserve, reserve, st)
	close(w.release)
	require.NoError(t, h.Close(bounded(t, 5*time.Second)))

	var important int
	var reported uint64
	for _, l := range parse(t, w.lines()) {
		switch l.Msg {
		case "important":
			important++
		case slogsink.DroppedMessage:
			reported += l.Dropped
		}
	}
	require.Equal(t, reserve, important)
	require.Equal(t, h.Dropped(), reported, "every drop is reported")
}
