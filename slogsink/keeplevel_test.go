package slogsink_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/slogsink"
)

func TestWarningsAreNotDroppedWhileInfoRecordsAre(t *testing.T) {
	for _, keep := range []slog.Leveler{nil, slog.LevelError} {
		t.Run("KeepLevel="+levelName(keep), func(t *testing.T) {
			// A held writer: the ring fills with INFO records and sheds
			// them; the reserve still takes the records at or above
			// KeepLevel, and the report in front of the first of them.
			got := writes{gate: make(chan struct{})}
			h := newHandler(t, &got, &slogsink.Options{Shards: 1, RingCapacity: 64, BatchSize: 1, KeepLevel: keep})
			lg := slog.New(h)
			for i := range 200 {
				lg.Info("routine", "i", i)
			}
			kept := slog.LevelWarn
			if keep != nil {
				kept = keep.Level()
				lg.Warn("shed like INFO") // below this KeepLevel
			}
			for i := range 7 { // 7 records and one report: the reserve of 8
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
			require.Equal(t, 7, important)
			final := h.Stats()
			want := map[string]uint64{}
			for l, n := range final.DroppedByLevel {
				want[l.String()] = n
			}
			require.Equal(t, want, reported, "the reports name the levels that lost records")
			require.Equal(t, uint64(200+7+boolInt(keep != nil)), final.Written+final.Dropped)
		})
	}
}

func TestDropsAreCountedByLevel(t *testing.T) {
	got := writes{gate: make(chan struct{})}
	h := newHandler(t, &got, &slogsink.Options{Shards: 1, RingCapacity: 8, BatchSize: 1, Level: slog.LevelDebug - 4})
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
