package sink_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/sink"
)

// Port of producer_quiesced_shutdown_drains_all_buffered_items.
func TestShutdownDrainsAllBufferedValues(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			c := &collector[ev]{}
			cfg := testCfg(4, 8192, 256)
			cfg.Ring = b.factory
			s, err := sink.New(cfg, c)
			require.NoError(t, err)
			var accepted []int
			for i := range 2000 {
				if s.Handle().Push(ev{i}) {
					accepted = append(accepted, i)
				}
			}
			require.NoError(t, s.Shutdown(context.Background()))
			got := make([]int, 0, len(accepted))
			for _, v := range c.values() {
				got = append(got, v.id)
			}
			slices.Sort(got)
			require.Equal(t, accepted, got)
			require.Zero(t, s.Stats().Queued)
		})
	}
}

// Port of shutdown_is_idempotent.
func TestShutdownIsIdempotent(t *testing.T) {
	s, err := sink.New(testCfg(2, 16, 4), nop[ev]())
	require.NoError(t, err)
	require.NoError(t, s.Shutdown(context.Background()))
	require.NoError(t, s.Shutdown(context.Background()))
}

// A Shutdown whose ctx ends reports what it left, and a later Shutdown
// with a live ctx drains it. (Before the rings closed and Shutdown could be
// resumed, the second call returned the first one's deadline error and the
// values stayed in the ring.)
func TestShutdownResumesAfterATimeout(t *testing.T) {
	g := newGate[ev]()
	s, err := sink.New(testCfg(1, 16, 4), g)
	require.NoError(t, err)
	defer g.release()
	require.True(t, s.Handle().Push(ev{0}))
	g.waitEntered(t)
	for i := 1; i <= 6; i++ {
		require.True(t, s.Handle().Push(ev{i}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	// The gated Drain returns when its ctx is cancelled, which Shutdown
	// does when its ctx ends; the worker then exits, leaving 6 values.
	err = s.Shutdown(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "values left in the rings")
	require.False(t, s.Push(ev{99}), "the rings are closed")
	g.release()
	require.NoError(t, s.Shutdown(context.Background()), "the resumed Shutdown drains what was left")
	got := g.values()
	require.Len(t, got, 7, "the batch cut short (handed to Drain) and the 6 left")
	require.Zero(t, s.Stats().Queued)
	require.Equal(t, uint64(1), s.Dropped(), "the push after Shutdown began")
	require.NoError(t, s.Shutdown(context.Background()), "once done, every later call returns nil")
}

func TestConcurrentShutdownsWaitForTheFirst(t *testing.T) {
	s, err := sink.New(testCfg(4, 1024, 64), nop[ev]())
	require.NoError(t, err)
	for i := range 500 {
		s.Push(ev{i})
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() { errs <- s.Shutdown(context.Background()) }()
	}
	for range 8 {
		require.NoError(t, <-errs)
	}
	require.Zero(t, s.Stats().Queued)
}

// Port of shutdown_with_live_producers_does_not_hang_or_panic.
func TestShutdownWithLiveProducersDoesNotHang(t *testing.T) {
	s, err := sink.New(testCfg(2, 1024, 64), nop[ev]())
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h := s.Handle()
		for i := range 1000 {
			h.Push(ev{i})
			if i%64 == 0 {
				runtime.Gosched()
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
	<-done
}

func TestShutdownCancelsInFlightDrain(t *testing.T) {
	sawCancel := make(chan error, 1)
	entered := make(chan struct{})
	var once sync.Once
	s, err := sink.New(testCfg(1, 16, 4), sink.ActionFunc[ev](func(ctx context.Context, _ []ev) {
		once.Do(func() { close(entered) })
		<-ctx.Done() // a Drain that honours ctx and never finishes otherwise
		select {
		case sawCancel <- ctx.Err():
		default:
		}
	}))
	require.NoError(t, err)
	s.Handle().Push(ev{1})
	<-entered
	for i := range 10 {
		s.Handle().Push(ev{i}) // left in the ring
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	err = s.Shutdown(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, <-sawCancel, context.Canceled)
	// goleak in TestMain checks that the worker exited anyway.
}

func TestShutdownWithCancelledCtx(t *testing.T) {
	g := newGate[ev]()
	s, err := sink.New(testCfg(1, 16, 4), g)
	require.NoError(t, err)
	defer g.release()
	s.Handle().Push(ev{1})
	g.waitEntered(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, s.Shutdown(ctx), context.Canceled)
}

func TestShutdownGivesTheFinalDrainItsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var deadlines []time.Time
		block := make(chan struct{})
		var blocked atomic.Bool
		s, err := sink.New(testCfg(1, 64, 4), sink.ActionFunc[ev](func(ctx context.Context, _ []ev) {
			if blocked.CompareAndSwap(false, true) {
				<-block // hold the worker until the values below are queued
			}
			d, _ := ctx.Deadline()
			mu.Lock()
			deadlines = append(deadlines, d)
			mu.Unlock()
		}))
		require.NoError(t, err)
		s.Handle().Push(ev{0})
		synctest.Wait()
		require.True(t, blocked.Load(), "the worker holds ev 0 in Drain")
		for i := range 8 {
			s.Handle().Push(ev{i + 1})
		}
		deadline := time.Now().Add(time.Minute)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		errc := make(chan error, 1)
		go func() { errc <- s.Shutdown(ctx) }()
		// Every goroutine blocked: Shutdown has set the final drain's ctx,
		// closed the stop signal and waits for the worker, which still
		// holds its first batch. So the 8 queued values go through the
		// final drain.
		synctest.Wait()
		close(block)
		require.NoError(t, <-errc)
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, deadlines, 3, "one held batch, then 8 values in batches of 4")
		require.False(t, deadlines[0].Equal(deadline), "the batch taken before Shutdown has no deadline")
		for _, d := range deadlines[1:] {
			require.True(t, d.Equal(deadline), "the final drain's ctx carries Shutdown's deadline")
		}
	})
}

// Flush must wait for a Drain call in flight even when every value has
// already left the rings.
func TestFlushWaitsForDrainToReturn(t *testing.T) {
	entered := make(chan int64, 10)
	first, second := make(chan struct{}), make(chan struct{})
	var calls atomic.Int64
	c := &collector[ev]{}
	s := newSink(t, testCfg(1, 64, 8), sink.ActionFunc[ev](func(ctx context.Context, batch []ev) {
		n := calls.Add(1)
		entered <- n
		wait := map[int64]chan struct{}{1: first, 2: second}[n]
		if wait != nil {
			select {
			case <-wait:
			case <-ctx.Done(): // a failed test's Shutdown
			}
		}
		c.Drain(ctx, batch)
	}))
	h := s.Handle()
	require.True(t, h.Push(ev{0}))
	require.Equal(t, int64(1), <-entered)
	for i := 1; i <= 4; i++ {
		require.True(t, h.Push(ev{i}))
	}
	close(first)
	require.Equal(t, int64(2), <-entered) // holds ev 1..4
	require.Zero(t, s.Stats().Queued, "every value has left the ring")

	flushed := make(chan error, 1)
	go func() { flushed <- s.Flush(context.Background()) }()
	select {
	case err := <-flushed:
		t.Fatalf("Flush returned %v while a Drain call was still running", err)
	case <-time.After(30 * time.Millisecond):
	}
	close(second)
	require.NoError(t, <-flushed)
	require.Equal(t, 5, c.count())
}

func TestFlushHonoursCtx(t *testing.T) {
	g := newGate[ev]()
	s := newSink(t, testCfg(1, 64, 8), g)
	t.Cleanup(g.release)
	s.Handle().Push(ev{1})
	g.waitEntered(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, s.Flush(ctx), context.DeadlineExceeded)
}

func TestFlushOnAnEmptySinkReturnsAtOnce(t *testing.T) {
	s := newSink(t, testCfg(4, 64, 8), nop[ev]())
	require.NoError(t, s.Flush(context.Background()))
}

// Flush with stealing on and producers that keep pushing: every value
// accepted before each Flush has been drained when it returns.
func TestFlushWithLiveProducersAndStealing(t *testing.T) {
	var accepted, drained idLog
	s := newStealingSink(t, sink.Config[ev]{Shards: 4, RingCapacity: 1 << 14, BatchSize: 32, Logger: quiet}, &drained, 2, 8)
	const producers, per = 4, 20000
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			h := s.HandleFor(uint64(p % 2)) // skewed: two shards at most
			for i := range per {
				id := p*per + i
				if h.Push(ev{id}) {
					accepted.add(id)
				}
				if i%64 == 0 {
					runtime.Gosched()
				}
			}
		})
	}
	producing := make(chan struct{})
	go func() { wg.Wait(); close(producing) }()
	flushWhileProducing(t, s, &accepted, &drained, producing)
}

func TestFlushAfterShutdown(t *testing.T) {
	s, err := sink.New(testCfg(2, 64, 8), nop[ev]())
	require.NoError(t, err)
	require.NoError(t, s.Shutdown(context.Background()))
	require.NoError(t, s.Flush(context.Background()), "nothing queued")
	require.False(t, s.Push(ev{1}), "the rings are closed")
	require.NoError(t, s.Flush(context.Background()), "nothing queued: the push was refused")
}

// Flush after a Shutdown that left values in the rings returns
// ErrShutdown: the workers have stopped and nothing drains them until a
// later Shutdown does.
func TestFlushAfterAnIncompleteShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &collector[ev]{}
		rings := &capturing{}
		s, err := sink.New(sink.Config[ev]{Shards: 1, Ring: rings.factory}, c)
		require.NoError(t, err)
		synctest.Wait()                                // the worker is parked
		require.True(t, rings.rings[0].TryPush(ev{1})) // no doorbell
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.ErrorIs(t, s.Shutdown(ctx), context.Canceled)
		<-s.Done()
		err = s.Flush(context.Background())
		require.ErrorIs(t, err, sink.ErrShutdown)
		require.False(t, errors.Is(err, context.DeadlineExceeded))
		require.NoError(t, s.Shutdown(context.Background()))
		require.Equal(t, 1, c.count())
	})
}

// Flush and Shutdown called from inside Drain with the ctx it was given (or
// one derived from it) would wait for the batch their own Drain call holds:
// they return ErrCalledFromDrain at once instead, and the sink goes on.
func TestFlushAndShutdownFromInsideDrainReturnAtOnce(t *testing.T) {
	type result struct {
		name    string
		err     error
		elapsed time.Duration
	}
	results := make(chan result, 3)
	var s *sink.Sink[ev]
	c := &collector[ev]{}
	s = newSink(t, testCfg(2, 64, 8), sink.ActionFunc[ev](func(ctx context.Context, batch []ev) {
		if batch[0].id == 0 {
			// A bound, so that the test fails rather than hangs on a
			// sink that waits for its own batch.
			bounded, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			for _, call := range []struct {
				name string
				f    func(context.Context) error
			}{
				{"Flush", s.Flush},
				{"Flush with a derived ctx", func(ctx context.Context) error {
					return s.Flush(context.WithValue(ctx, derivedKey{}, 1))
				}},
				{"Shutdown", s.Shutdown},
			} {
				start := time.Now()
				err := call.f(bounded)
				results <- result{call.name, err, time.Since(start)}
			}
		}
		c.Drain(ctx, batch)
	}))
	require.True(t, s.Handle().Push(ev{0}))
	for range 3 {
		r := <-results
		require.ErrorIs(t, r.err, sink.ErrCalledFromDrain, r.name)
		require.Less(t, r.elapsed, time.Second, "%s returned at once", r.name)
	}
	// The sink was not shut down: it still drains, and Flush from outside
	// works.
	require.True(t, s.Handle().Push(ev{1}))
	require.NoError(t, s.Flush(context.Background()))
	require.Equal(t, 2, c.count())
}

// Called from inside Drain with an unrelated ctx, Flush cannot tell that it
// waits for its own call; when that ctx ends, its error says what it was
// waiting for, and still wraps ctx.Err().
func TestFlushFromInsideDrainWithAnotherCtxSaysWhatItWaitedFor(t *testing.T) {
	errc := make(chan error, 1)
	var s *sink.Sink[ev]
	s = newSink(t, testCfg(2, 64, 8), sink.ActionFunc[ev](func(_ context.Context, batch []ev) {
		if batch[0].id == 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			errc <- s.Flush(ctx)
		}
	}))
	h := s.Handle()
	require.True(t, h.Push(ev{0}))
	err := <-errc
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, fmt.Sprintf("while the Drain call of shard %d had not returned since the Flush began", h.Shard()))
	require.ErrorContains(t, err, "waits for itself: pass it the ctx Drain received")

	// A Flush whose ctx ends with no Drain call outstanding since it began
	// returns ctx.Err() itself. The worker may already be in the round
	// that drains ev{1} when the Flush begins (the push woke it): then the
	// error names that call, and still wraps ctx.Err().
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, s.Flush(context.Background()))
	require.True(t, h.Push(ev{1}))
	err = s.Flush(ctx)
	if err != nil && err != context.Canceled {
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorContains(t, err, fmt.Sprintf("while the Drain call of shard %d had not returned since the Flush began", h.Shard()))
	}
}

// derivedKey is the key of a value that derives a ctx from Drain's.
type derivedKey struct{}

// A ctx from a Drain call of one sink does not stop a Flush of another.
func TestFlushOfAnotherSinkFromInsideDrainWorks(t *testing.T) {
	other := newSink(t, testCfg(1, 16, 4), nop[ev]())
	errc := make(chan error, 1)
	s := newSink(t, testCfg(1, 16, 4), sink.ActionFunc[ev](func(ctx context.Context, _ []ev) {
		if !other.Handle().Push(ev{1}) {
			errc <- errors.New("the push into the other sink was rejected")
			return
		}
		errc <- other.Flush(ctx)
	}))
	require.True(t, s.Handle().Push(ev{0}))
	require.NoError(t, <-errc)
}

// lateCtx is a ctx whose deadline has passed but whose Done channel is still
// open and whose Err is still nil: the state a context.WithDeadline is in
// between its deadline and the run of its timer.
type lateCtx struct {
	context.Context
	deadline time.Time
}

func (c lateCtx) Deadline() (time.Time, bool) { return c.deadline, true }

// A Shutdown whose ctx has ended leaves values in the rings: it must say so,
// even when it sees the workers exit before it sees its ctx end.
func TestShutdownWithAnEndedCtxReportsValuesLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &collector[ev]{}
		rings := &capturing{}
		s, err := sink.New(sink.Config[ev]{Shards: 1, Ring: rings.factory}, c)
		require.NoError(t, err)
		synctest.Wait() // the worker is parked
		for i := range 3 {
			require.True(t, rings.rings[0].TryPush(ev{i})) // no doorbell
		}
		cctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ctx := lateCtx{cctx, time.Now().Add(-time.Second)}
		err = s.Shutdown(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded, "3 values are still in the ring")
		require.Equal(t, 3, s.Stats().Queued)
		require.Zero(t, c.count())
		require.ErrorContains(t, err, "3 values left in the rings")
		require.NoError(t, s.Shutdown(context.Background()), "a later Shutdown resumes the drain")
		require.Equal(t, 3, c.count())
		require.Zero(t, s.Stats().Queued)
	})
}

// A Shutdown of an idle sink whose ctx has ended loses nothing; when the
// workers' exit is what it sees, it returns nil.
func TestShutdownWithAnEndedCtxOnAnEmptySink(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := sink.New(sink.Config[ev]{Shards: 2}, nop[ev]())
		require.NoError(t, err)
		synctest.Wait()
		cctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		require.NoError(t, s.Shutdown(lateCtx{cctx, time.Now().Add(-time.Second)}))
	})
}
