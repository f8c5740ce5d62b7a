package sink_test

import (
	"context"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/cputime"
	"github.com/shardedsink/shardedsink/sink"
)

// Port of panicking_drain_does_not_kill_the_shard.
func TestPanickingDrainDoesNotKillTheShard(t *testing.T) {
	logger, buf := testLogger()
	var panicked atomic.Bool
	c := &collector[ev]{}
	cfg := testCfg(1, 64, 8)
	cfg.Name, cfg.Logger = "events", logger
	s := newSink(t, cfg, sink.ActionFunc[ev](func(ctx context.Context, batch []ev) {
		if panicked.CompareAndSwap(false, true) {
			panic("drain failed")
		}
		c.Drain(ctx, batch)
	}))
	h := s.Handle()
	require.True(t, h.Push(ev{1}))
	eventually(t, panicked.Load, "the first Drain call ran")
	for i := 2; i <= 50; i++ {
		require.True(t, h.Push(ev{i}))
	}
	require.NoError(t, s.Flush(context.Background()))
	require.Equal(t, 49, c.count(), "only the first batch, ev 1 alone, is lost")
	out := buf.String()
	require.Contains(t, out, "level=ERROR")
	require.Contains(t, out, "Drain panicked")
	require.Contains(t, out, "sink=events shard=0")
	require.Contains(t, out, "panic=\"drain failed\"")
}

// Port of nonyielding_drain_does_not_starve_the_runtime. On one P, a Drain
// that never blocks (it pushes its batch straight back, so the ring never
// empties) must still let other goroutines run: the worker yields between
// batches once it has run for 2 ms (worker.yieldDue). A canary that yields
// too then runs about once per 2 ms of the process's CPU time; without the
// worker's yields it would run once per 10 ms preemption slice. The
// process's CPU time, not the wall clock, so that a machine that
// deschedules the test's thread does not fail it.
func TestNonYieldingDrainDoesNotStarveOtherGoroutines(t *testing.T) {
	if _, err := cputime.Process(); err != nil {
		t.Skipf("no process CPU time here: %v", err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var canary atomic.Int64
	var stop atomic.Bool
	var h *sink.Handle[ev]
	s := newSink(t, testCfg(1, 1024, 64), sink.ActionFunc[ev](func(_ context.Context, batch []ev) {
		if stop.Load() {
			return
		}
		for _, v := range batch {
			h.Push(v)
		}
	}))
	h = s.Handle()
	cpu0, err := cputime.Process()
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			canary.Add(1)
			runtime.Gosched()
		}
	})
	for i := range 512 {
		h.Push(ev{i})
	}
	time.Sleep(300 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	cpu1, err := cputime.Process()
	require.NoError(t, err)
	c, cpu := canary.Load(), cpu1-cpu0
	require.GreaterOrEqual(t, c, int64(cpu/(5*time.Millisecond)),
		"the canary ran %d times in %v of CPU: less than once per 5 ms", c, cpu)
}

func TestDrainGetsBoundedCappedBatches(t *testing.T) {
	var mu sync.Mutex
	var sizes []int
	var capped, ctxOK = true, true
	s := newSink(t, sink.Config[ev]{Shards: 2, RingCapacity: 1024, BatchSize: 16},
		sink.ActionFunc[ev](func(ctx context.Context, batch []ev) {
			mu.Lock()
			defer mu.Unlock()
			sizes = append(sizes, len(batch))
			capped = capped && cap(batch) == len(batch)
			ctxOK = ctxOK && ctx.Err() == nil
		}))
	for i := range 1000 {
		s.Push(ev{i})
	}
	require.NoError(t, s.Flush(context.Background()))
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for _, n := range sizes {
		require.Positive(t, n)
		require.LessOrEqual(t, n, 16)
		total += n
	}
	require.Equal(t, 1000, total)
	require.True(t, capped, "cap(batch) == len(batch), so an append in Drain cannot clobber the worker's buffer")
	require.True(t, ctxOK, "the ctx is live until Shutdown")
}

func TestBatchIsClearedAfterDrain(t *testing.T) {
	var mu sync.Mutex
	var kept [][]*int
	s := newSink(t, sink.Config[*int]{Shards: 1, RingCapacity: 64, BatchSize: 8},
		sink.ActionFunc[*int](func(_ context.Context, batch []*int) {
			mu.Lock()
			defer mu.Unlock()
			kept = append(kept, batch) // misbehaving on purpose, to look after Drain
		}))
	for i := range 20 {
		s.Push(&i)
	}
	require.NoError(t, s.Flush(context.Background()))
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, kept)
	for _, b := range kept {
		for _, p := range b {
			require.Nil(t, p, "the worker clears the batch so that the GC can free what it held")
		}
	}
}

// panickingHandler is a slog.Handler whose Handle panics, or calls
// runtime.Goexit, for every record.
type panickingHandler struct {
	slog.Handler
	goexit bool
	calls  atomic.Int64
}

func (h *panickingHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *panickingHandler) Handle(context.Context, slog.Record) error {
	h.calls.Add(1)
	if h.goexit {
		runtime.Goexit()
	}
	panic("logger failed")
}

// A Drain that calls runtime.Goexit, and a logger that panics or calls
// Goexit while the worker reports a panicking Drain, end the worker's
// goroutine: the shard gets a new one, Flush and Shutdown still return, and
// only the failed batch is lost.
func TestAWorkerWhoseGoroutineEndsIsReplaced(t *testing.T) {
	cases := []struct {
		name   string
		logger *panickingHandler // nil: a working logger
		fail   func()
	}{
		{"Drain calls Goexit", nil, runtime.Goexit},
		{"the logger panics on a Drain panic", &panickingHandler{}, func() { panic("drain failed") }},
		{"the logger calls Goexit on a Drain panic", &panickingHandler{goexit: true}, func() { panic("drain failed") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			logger, buf := testLogger()
			if c.logger != nil {
				logger = slog.New(c.logger)
			}
			var failed atomic.Int64
			col := &collector[ev]{}
			cfg := testCfg(1, 64, 8)
			cfg.Logger = logger
			s, err := sink.New(cfg, sink.ActionFunc[ev](func(ctx context.Context, batch []ev) {
				if batch[0].id%100 == 0 { // ev 0 and ev 100, each alone in its batch
					failed.Add(1)
					c.fail()
				}
				col.Drain(ctx, batch)
			}))
			require.NoError(t, err)
			h := s.Handle()
			for round := range 2 {
				require.True(t, h.Push(ev{100 * round}))
				eventually(t, func() bool { return failed.Load() == int64(round+1) }, "the failing Drain call ran")
				for i := 1; i <= 20; i++ {
					require.True(t, h.Push(ev{100*round + i}))
				}
				// Bounded, so that a dead worker fails the test instead of
				// hanging it.
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				require.NoError(t, s.Flush(ctx), "round %d", round)
				cancel()
				require.Equal(t, 20*(round+1), col.count())
			}
			require.Equal(t, uint64(2), s.Stats().DrainPanics)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			require.NoError(t, s.Shutdown(ctx))
			if c.logger != nil {
				require.Equal(t, int64(2), c.logger.calls.Load(), "one report per failed batch")
			} else {
				require.Contains(t, buf.String(), "Drain called runtime.Goexit")
			}
		})
	}
}

// The log record of a Drain panic carries the stack of the panic, at most
// once per minute per sink: a Drain that panics on every batch does not
// fill the log with stacks.
func TestDrainPanicLogCarriesARateLimitedStack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger, buf := testLogger()
		cfg := testCfg(1, 64, 1)
		cfg.Logger = logger
		s, err := sink.New(cfg, sink.ActionFunc[ev](func(context.Context, []ev) {
			panicInDrain()
		}))
		require.NoError(t, err)
		stacks := func() int { return strings.Count(buf.String(), "panicInDrain") }
		records := func() int { return strings.Count(buf.String(), "Drain panicked") }

		for i := range 3 {
			require.True(t, s.Handle().Push(ev{i}))
		}
		synctest.Wait()
		require.Equal(t, 3, records())
		require.Equal(t, 1, stacks(), "the first record has the stack, the next two do not")
		require.Contains(t, buf.String(), "worker_test.go", "the stack shows where Drain panicked")

		time.Sleep(time.Minute)
		require.True(t, s.Handle().Push(ev{3}))
		synctest.Wait()
		require.Equal(t, 4, records())
		require.Equal(t, 2, stacks(), "a minute later, a stack again")
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

//go:noinline
func panicInDrain() { panic("drain failed") }

// Done is closed once the workers have exited: after a Shutdown whose ctx
// ended first, when the last Drain call returns.
func TestDoneIsClosedWhenTheWorkersHaveExited(t *testing.T) {
	g := newGate[ev]()
	s, err := sink.New(testCfg(2, 16, 4), sink.ActionFunc[ev](func(_ context.Context, batch []ev) {
		g.Drain(context.Background(), batch) // ignores its ctx
	}))
	require.NoError(t, err)
	defer g.release()
	require.True(t, s.Handle().Push(ev{1}))
	g.waitEntered(t)
	select {
	case <-s.Done():
		t.Fatal("Done is closed before Shutdown")
	default:
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, s.Shutdown(ctx), context.Canceled)
	select {
	case <-s.Done():
		t.Fatal("Done is closed while a Drain call is still running")
	default:
	}
	g.release()
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done was not closed after the last Drain call returned")
	}
}

// TestAWorkerKeepsUpBesideBusyGoroutines guards the worker's waits (see
// worker.yieldDue and park): with two goroutines keeping both processors
// busy, eight producers paced at 40,000 values a second in all push into
// one shard of 256 slots with the hand-off off, so that a worker that
// falls 6 ms behind sheds. A worker that parks at once, woken by the push
// into the pusher's processor, keeps up; one that yielded
// (runtime.Gosched) after every batch and before parking waited 20 ms and
// more at a time on the global run queue behind the busy goroutines, and
// the ring shed 12,449 to 14,492 of the 20,000 values (343 to 3,157 now).
func TestAWorkerKeepsUpBesideBusyGoroutines(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for half a second beside two spinning goroutines")
	}
	if raceSlowdown > 1 {
		t.Skip("the race detector slows the pushes and the worker tenfold: the pace here is for full speed")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	var drained atomic.Int64
	cfg := testCfg(1, 256, 64)
	cfg.DisableHandOff = true
	s := newSink(t, cfg, sink.ActionFunc[ev](func(_ context.Context, batch []ev) {
		drained.Add(int64(len(batch)))
	}))
	var stop atomic.Bool
	var spin sync.WaitGroup
	for range 2 {
		spin.Go(func() {
			for !stop.Load() { // spins on purpose: a processor kept busy
			}
		})
	}
	const producers, each, every = 8, 2500, 200 * time.Microsecond
	var push sync.WaitGroup
	for p := range producers {
		push.Go(func() {
			h := s.Handle()
			next := time.Now()
			for i := range each {
				next = next.Add(every)
				if d := time.Until(next); d > 0 {
					time.Sleep(d)
				}
				h.Push(ev{p*each + i})
			}
		})
	}
	push.Wait()
	stop.Store(true)
	spin.Wait()
	require.NoError(t, s.Flush(context.Background()))
	st := s.Stats()
	t.Logf("pushed %d, drained %d, dropped %d", producers*each, drained.Load(), st.Dropped)
	require.LessOrEqual(t, st.Dropped, uint64(producers*each*35/100),
		"the worker fell behind beside busy goroutines: %d of %d values shed", st.Dropped, producers*each)
}
