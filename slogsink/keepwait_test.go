package slogsink_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/sink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// gatedBuffer keeps what it is given once gate is closed.
type gatedBuffer struct {
	gate chan struct{}
	mu   sync.Mutex
	b    bytes.Buffer
}

func (g *gatedBuffer) Write(p []byte) (int, error) {
	<-g.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.b.Write(p)
}

// A WARN record that finds its ring full waits Options.KeepWait for room
// and is then shed: counted in Stats.WaitedOut, and the drop report, which
// the Format handler formats, says so by level. An INFO record never
// waits.
func TestAWarningWaitsOutAndTheReportSaysSo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const keepWait = 3 * time.Millisecond
		dst := &gatedBuffer{gate: make(chan struct{})}
		h, err := slogsink.New(dst, &slogsink.Options{Buffering: logsink.Buffering{Shards: 1, RingCapacity: 8, MaxDelay: -1, KeepWait: keepWait}})
		require.NoError(t, err)
		lg := slog.New(h)
		lg.Info("taken by the worker")
		synctest.Wait()
		time.Sleep(2 * sink.SlowDrain) // the Write is slow: no hand-off
		timed := func(f func()) time.Duration { t0 := time.Now(); f(); return time.Since(t0) }
		for range 7 {
			lg.Info("kept")
		}
		require.Zero(t, timed(func() { lg.Info("shed") }), "an INFO record waited")
		lg.Warn("in the reserve")
		require.Equal(t, keepWait, timed(func() { lg.Warn("waits out") }))
		st := h.Stats()
		require.Equal(t, uint64(1), st.WaitedOut, "%+v", st)
		require.Equal(t, uint64(2), st.Dropped)

		close(dst.gate)
		require.NoError(t, h.Close(context.Background()))
		out := dst.b.String()
		// The WARN in the reserve carried the report of the INFO shed; Close
		// reports the WARN that waited out.
		require.Contains(t, out, `"dropped":1,"dropped_by_level":{"INFO":1}}`+"\n")
		require.Contains(t, out, `"dropped":1,"dropped_by_level":{"WARN":1},"waited_out":1,"waited_out_by_level":{"WARN":1}}`+"\n")
		require.NotContains(t, out, "waits out")
		require.Equal(t, 2, strings.Count(out, slogsink.DroppedMessage), out)
	})
}

// With KeepWait negative a WARN record into a full ring is shed at once.
func TestANegativeKeepWaitNeverWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dst := &gatedBuffer{gate: make(chan struct{})}
		h, err := slogsink.New(dst, &slogsink.Options{Buffering: logsink.Buffering{Shards: 1, RingCapacity: 2, MaxDelay: -1, KeepWait: -1}})
		require.NoError(t, err)
		lg := slog.New(h)
		lg.Info("taken by the worker")
		synctest.Wait()
		time.Sleep(2 * sink.SlowDrain) // the Write is slow: no hand-off
		lg.Warn("a")
		lg.Warn("b")
		t0 := time.Now()
		lg.Error("shed at once")
		require.Zero(t, time.Since(t0))
		close(dst.gate)
		require.NoError(t, h.Close(context.Background()))
		st := h.Stats()
		require.Equal(t, uint64(1), st.Dropped)
		require.Zero(t, st.WaitedOut)
	})
}
