package sink_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/sink"
)

// recorder is an OnOverload that records its calls. The monitor calls it
// from its own goroutine, so even under synctest its state needs a mutex.
type recorder struct {
	mu    sync.Mutex
	calls []sink.Overload
}

func (r *recorder) onOverload(o sink.Overload) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, o)
}

func (r *recorder) snapshot() []sink.Overload {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sink.Overload(nil), r.calls...)
}

// overflow makes a one-shard sink of capacity 4 whose worker is stuck in a
// gated Drain, and pushes n values past its capacity.
func overflow(t *testing.T, cfg sink.Config[ev], n int) (*sink.Sink[ev], *gate[ev]) {
	t.Helper()
	g := newGate[ev]()
	cfg.Shards, cfg.RingCapacity, cfg.BatchSize = 1, 4, 1
	s, err := sink.New(cfg, g)
	require.NoError(t, err)
	h := s.Handle()
	require.True(t, h.Push(ev{0}))
	g.waitEntered(t)
	// A Drain call that has run sink.SlowDrain is a stalled destination:
	// from then on a push into a full ring sheds at once.
	time.Sleep(2 * sink.SlowDrain)
	for i := range 4 + n {
		h.Push(ev{i + 1})
	}
	require.Equal(t, uint64(n), s.Dropped())
	return s, g
}

// Port of drops_trigger_overload_once_per_positive_delta_tick.
func TestOverloadReportedOncePerRise(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		s, g := overflow(t, sink.Config[ev]{Name: "events", OverloadInterval: 100 * time.Millisecond, OnOverload: r.onOverload}, 6)

		time.Sleep(150 * time.Millisecond)
		synctest.Wait()
		calls := r.snapshot()
		require.Len(t, calls, 1)
		require.Equal(t, sink.Overload{Sink: "events", Delta: 6, Total: 6, Interval: 100 * time.Millisecond}, calls[0])

		time.Sleep(150 * time.Millisecond)
		synctest.Wait()
		require.Len(t, r.snapshot(), 1, "no new drops, no new report")

		s.Handle().Push(ev{99}) // still full: one more drop
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		calls = r.snapshot()
		require.Len(t, calls, 2)
		require.Equal(t, uint64(1), calls[1].Delta)
		require.Equal(t, uint64(7), calls[1].Total)

		g.release()
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

func TestOverloadFirstCheckIsOneIntervalAfterNew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		s, g := overflow(t, sink.Config[ev]{OverloadInterval: time.Second, OnOverload: r.onOverload}, 3)
		time.Sleep(999*time.Millisecond - 2*sink.SlowDrain) // overflow slept that long
		synctest.Wait()
		require.Empty(t, r.snapshot())
		time.Sleep(time.Millisecond)
		synctest.Wait()
		require.Len(t, r.snapshot(), 1)
		g.release()
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

func TestNoOverloadWithoutDrops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		s, err := sink.New(sink.Config[ev]{OverloadInterval: 10 * time.Millisecond, OnOverload: r.onOverload}, nop[ev]())
		require.NoError(t, err)
		for i := range 100 {
			s.Push(ev{i})
		}
		time.Sleep(time.Second)
		synctest.Wait()
		require.Empty(t, r.snapshot())
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

func TestDefaultOverloadReportLogsAtError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger, buf := testLogger()
		s, g := overflow(t, sink.Config[ev]{Name: "events", OverloadInterval: time.Second, Logger: logger}, 2)
		time.Sleep(time.Second)
		synctest.Wait()
		out := buf.String()
		require.Contains(t, out, "level=ERROR")
		require.Contains(t, out, "values dropped because rings were full")
		require.Contains(t, out, "sink=events delta=2 total=2 interval=1s")
		g.release()
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

func TestPanickingOnOverloadIsRecoveredAndLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger, buf := testLogger()
		calls := 0
		var mu sync.Mutex
		s, g := overflow(t, sink.Config[ev]{
			Name: "events", OverloadInterval: time.Second, Logger: logger,
			OnOverload: func(sink.Overload) {
				mu.Lock()
				calls++
				mu.Unlock()
				panic("overload hook failed")
			},
		}, 2)
		time.Sleep(time.Second)
		synctest.Wait()
		require.Contains(t, buf.String(), "OnOverload panicked")
		require.Contains(t, buf.String(), "overload hook failed")

		s.Handle().Push(ev{99})
		time.Sleep(time.Second)
		synctest.Wait()
		mu.Lock()
		require.Equal(t, 2, calls, "the monitor goes on")
		mu.Unlock()
		g.release()
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

// Drops in the last, partial interval are reported when the monitor stops.
func TestOverloadLastCheckAtShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		s, g := overflow(t, sink.Config[ev]{Name: "events", OverloadInterval: time.Second, OnOverload: r.onOverload}, 5)
		time.Sleep(time.Second - 2*sink.SlowDrain) // overflow slept that long
		synctest.Wait()
		require.Len(t, r.snapshot(), 1, "the first interval's drops")

		time.Sleep(300 * time.Millisecond)
		s.Handle().Push(ev{99}) // still full: a drop in a partial interval
		g.release()
		require.NoError(t, s.Shutdown(context.Background()))
		calls := r.snapshot()
		require.Len(t, calls, 2, "the last check reports the partial interval")
		require.Equal(t, sink.Overload{Sink: "events", Delta: 1, Total: 6, Interval: 300 * time.Millisecond}, calls[1],
			"the interval is the partial one the drops were counted over, not the OverloadInterval")
	})
}

// A Shutdown with no drops since the last check reports nothing more.
func TestOverloadLastCheckIsQuietWithoutNewDrops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &recorder{}
		s, g := overflow(t, sink.Config[ev]{OverloadInterval: time.Second, OnOverload: r.onOverload}, 2)
		time.Sleep(time.Second)
		synctest.Wait()
		g.release()
		require.NoError(t, s.Shutdown(context.Background()))
		require.Len(t, r.snapshot(), 1)
	})
}

// An OnOverload that calls runtime.Goexit does not end the monitor: it goes
// on in a new goroutine, and Shutdown still returns.
func TestOnOverloadThatCallsGoexitDoesNotStopTheMonitor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger, buf := testLogger()
		r := &recorder{}
		s, g := overflow(t, sink.Config[ev]{
			OverloadInterval: time.Second, Logger: logger,
			OnOverload: func(o sink.Overload) {
				r.onOverload(o)
				runtime.Goexit()
			},
		}, 2)
		time.Sleep(time.Second)
		synctest.Wait()
		require.Len(t, r.snapshot(), 1)
		require.Contains(t, buf.String(), "OnOverload called runtime.Goexit")

		s.Handle().Push(ev{99})
		time.Sleep(time.Second)
		synctest.Wait()
		require.Len(t, r.snapshot(), 2, "the monitor goes on")
		g.release()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, s.Shutdown(ctx))
		require.Len(t, r.snapshot(), 2, "nothing new to report at the last check")
	})
}
