package sink_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/sink"
)

// stalled returns a one-shard sink whose worker is held in its first Drain
// call (holding the value -1), with a ring of capacity values that the
// test then fills, and the gate that holds it.
func stalled(t *testing.T, capacity int) (*sink.Sink[ev], *gate[ev]) {
	t.Helper()
	g := newGate[ev]()
	s := newSink(t, testCfg(1, capacity, 1), g)
	t.Cleanup(g.release)
	require.True(t, s.Handle().Push(ev{-1}))
	g.waitEntered(t)
	eventually(t, func() bool { return s.Stats().Queued == 0 }, "the worker took its value")
	for i := range capacity {
		require.True(t, s.Handle().Push(ev{i}))
	}
	return s, g
}

func TestPushWaitPushesAtOnceWhenThereIsRoom(t *testing.T) {
	c := &collector[ev]{}
	s := newSink(t, testCfg(2, 8, 4), c)
	require.NoError(t, s.Handle().PushWait(context.Background(), ev{1}))
	require.NoError(t, s.PushWait(context.Background(), ev{2}))
	// A ctx that has ended does not matter while there is room.
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, s.Handle().PushWait(ended, ev{3}))
	require.NoError(t, s.PushWait(ended, ev{4}))
	flush(t, s)
	require.ElementsMatch(t, []ev{{1}, {2}, {3}, {4}}, c.values())
	st := s.Stats()
	require.Zero(t, st.Dropped)
	require.Zero(t, st.WaitedOut)
}

func TestPushWaitWaitsForRoomAndIsWokenWhenTheDrainFreesIt(t *testing.T) {
	for _, via := range []string{"Handle", "Sink"} {
		t.Run(via, func(t *testing.T) {
			s, g := stalled(t, 4)
			require.False(t, s.Handle().Push(ev{99}), "the ring is full")
			done := make(chan error, 1)
			go func() {
				if via == "Handle" {
					done <- s.Handle().PushWait(context.Background(), ev{100})
				} else {
					done <- s.PushWait(context.Background(), ev{100})
				}
			}()
			eventually(t, func() bool { return s.Stats().Waiting == 1 }, "the caller parks")
			select {
			case err := <-done:
				t.Fatalf("PushWait returned %v while the ring was full", err)
			case <-time.After(20 * time.Millisecond):
			}
			g.release()
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(10 * time.Second):
				t.Fatal("the waiter was not woken when the drain freed room")
			}
			flush(t, s)
			require.Contains(t, g.values(), ev{100})
			st := s.Stats()
			require.Equal(t, uint64(1), st.Dropped, "only the Push into the full ring")
			require.Zero(t, st.WaitedOut)
			require.Zero(t, st.Waiting)
		})
	}
}

// The timing, on synctest's clock: a PushWait whose ctx has a deadline
// returns at that deadline exactly, not before, and counts its value as
// waited out.
func TestPushWaitGivesUpAtItsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		s := sink.MustNew(testCfg(1, 2, 1), sink.ActionFunc[ev](func(ctx context.Context, _ []ev) {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}))
		h := s.Handle()
		for i := range 3 { // one in the Drain call, two in the ring
			require.True(t, h.Push(ev{i}))
			synctest.Wait()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := h.PushWait(ctx, ev{3})
		require.Equal(t, context.DeadlineExceeded, err, "ctx.Err(), unwrapped")
		require.Equal(t, 50*time.Millisecond, time.Since(start))
		st := s.Stats()
		require.Equal(t, uint64(1), st.Dropped)
		require.Equal(t, uint64(1), st.WaitedOut)
		require.Equal(t, uint64(1), st.PerShard[0].WaitedOut)
		require.Zero(t, st.Waiting)

		// A ctx that has already ended: at once, counted alike.
		start = time.Now()
		require.Equal(t, context.DeadlineExceeded, h.PushWait(ctx, ev{4}))
		require.Zero(t, time.Since(start))
		require.Equal(t, uint64(2), s.Stats().WaitedOut)
		close(release)
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

// A ctx cancelled while its caller waits wakes that caller at once (on
// synctest's clock: no time passes), and only that one.
func TestACancelledCtxWakesItsWaiterPromptly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		s := sink.MustNew(testCfg(1, 1, 1), sink.ActionFunc[ev](func(ctx context.Context, _ []ev) {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}))
		h := s.Handle()
		require.True(t, h.Push(ev{0}))
		synctest.Wait()
		require.True(t, h.Push(ev{1}))
		ctx, cancel := context.WithCancel(context.Background())
		errs := make(chan error, 2)
		go func() { errs <- h.PushWait(ctx, ev{2}) }()
		go func() { errs <- h.PushWait(context.Background(), ev{3}) }()
		synctest.Wait()
		require.Equal(t, 2, s.Stats().Waiting)
		start := time.Now()
		cancel()
		synctest.Wait()
		require.Equal(t, context.Canceled, <-errs)
		require.Zero(t, time.Since(start))
		require.Equal(t, 1, s.Stats().Waiting, "the other caller still waits")
		close(release)
		require.NoError(t, <-errs, "the other caller got room")
		require.NoError(t, s.Shutdown(context.Background()))
		st := s.Stats()
		require.Equal(t, uint64(1), st.WaitedOut)
		require.Equal(t, uint64(4-1), st.Drained)
	})
}

// Shutdown wakes every waiter; each returns ErrShutdown and counts its
// value as dropped, and a PushWait once Shutdown has begun returns it at
// once, even with room in the ring.
func TestShutdownWakesEveryWaiter(t *testing.T) {
	g := newGate[ev]()
	s, err := sink.New(testCfg(2, 4, 1), g)
	require.NoError(t, err)
	for i := range 2 {
		require.True(t, s.Handle().Push(ev{-1 - i}))
	}
	g.waitEntered(t)
	for !func() bool { return s.Stats().Queued == 0 }() {
		time.Sleep(time.Millisecond)
	}
	for i := range 8 {
		require.True(t, s.Handle().Push(ev{i}))
	}
	const waiters = 64
	var wg sync.WaitGroup
	errs := make(chan error, waiters)
	for i := range waiters {
		wg.Go(func() {
			if i%2 == 0 {
				errs <- s.Handle().PushWait(context.Background(), ev{100 + i})
			} else {
				errs <- s.PushWait(context.Background(), ev{100 + i})
			}
		})
	}
	eventually(t, func() bool { return s.Stats().Waiting == waiters }, "every caller parks")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	// The drain is stalled: Shutdown's ctx ends, but the waiters are woken
	// as it begins.
	require.ErrorIs(t, s.Shutdown(ctx), context.DeadlineExceeded)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.ErrorIs(t, err, sink.ErrShutdown)
	}
	require.Equal(t, sink.ErrShutdown, s.Handle().PushWait(context.Background(), ev{1000}))
	require.Equal(t, sink.ErrShutdown, s.PushWait(context.Background(), ev{1001}))
	g.release()
	require.NoError(t, s.Shutdown(context.Background()))
	st := s.Stats()
	require.Equal(t, uint64(waiters+2), st.Dropped)
	require.Zero(t, st.WaitedOut, "shut out, not waited out")
	require.Zero(t, st.Waiting)
	require.Equal(t, uint64(10), st.Drained)
}

// A value larger than its shard's share of MaxQueuedBytes goes in only
// alone: PushWait refuses it at once when the shard holds something, and
// never parks for it.
func TestPushWaitRefusesAtOnceAValueThatCanNeverFit(t *testing.T) {
	g := newGate[blob]()
	s := newSink(t, bytesCfg(1, 8, 1, 0, 100), g)
	defer g.release()
	h := s.Handle()
	require.NoError(t, h.PushWait(context.Background(), blob{1, 10}))
	g.waitEntered(t)
	// The shard holds 10 bytes (in the Drain call): 150 can never join them.
	err := h.PushWait(context.Background(), blob{2, 150})
	require.ErrorIs(t, err, sink.ErrValueTooLarge)
	require.Equal(t, sink.ErrValueTooLarge, s.PushWait(context.Background(), blob{3, 150}))
	st := s.Stats()
	require.Equal(t, uint64(2), st.Dropped)
	require.Equal(t, uint64(2), st.DroppedForBytes)
	require.Zero(t, st.WaitedOut)
	require.Zero(t, st.Waiting)
}

// With a byte budget the room that wakes a waiter is in bytes too: it
// comes back when the Drain call that holds the bytes returns.
func TestPushWaitWaitsForBytes(t *testing.T) {
	g := newGate[blob]()
	s := newSink(t, bytesCfg(1, 8, 1, 0, 100), g)
	defer g.release()
	h := s.Handle()
	require.True(t, h.Push(blob{1, 80}))
	g.waitEntered(t)
	require.False(t, h.Push(blob{2, 30}), "80 + 30 bytes: over the share")
	done := make(chan error, 1)
	go func() { done <- h.PushWait(context.Background(), blob{3, 30}) }()
	eventually(t, func() bool { return s.Stats().Waiting == 1 }, "the caller parks")
	g.release()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter was not woken when the bytes came back")
	}
	flush(t, s)
	require.Contains(t, g.values(), blob{3, 30})
}

// Under DropOldest a PushWait waits for room instead of displacing a value.
func TestPushWaitDoesNotDisplaceUnderDropOldest(t *testing.T) {
	g := newGate[ev]()
	cfg := testCfg(1, 2, 1)
	cfg.Overflow = sink.DropOldest
	s := newSink(t, cfg, g)
	defer g.release()
	h := s.Handle()
	require.True(t, h.Push(ev{0}))
	g.waitEntered(t)
	eventually(t, func() bool { return s.Stats().Queued == 0 }, "the worker took its value")
	require.True(t, h.Push(ev{1}))
	require.True(t, h.Push(ev{2}))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	require.Equal(t, context.DeadlineExceeded, h.PushWait(ctx, ev{3}))
	st := s.Stats()
	require.Equal(t, 2, st.Queued, "nothing displaced")
	require.Equal(t, uint64(1), st.Dropped)
	require.Equal(t, uint64(1), st.WaitedOut)
	g.release()
	flush(t, s)
	require.Equal(t, []ev{{0}, {1}, {2}}, g.values())
}

func TestPushWaitMisuse(t *testing.T) {
	var zero sink.Sink[ev]
	var h sink.Handle[ev]
	require.PanicsWithValue(t, "sink: Sink used without New", func() { _ = zero.PushWait(context.Background(), ev{}) })
	require.PanicsWithValue(t, "sink: Handle used without New", func() { _ = h.PushWait(context.Background(), ev{}) })
	s := newSink(t, testCfg(1, 4, 1), nop[ev]())
	//lint:ignore SA1012 the nil ctx is the point
	require.PanicsWithValue(t, "sink: PushWait called with a nil ctx", func() { _ = s.PushWait(nil, ev{}) }) //nolint:staticcheck
	//lint:ignore SA1012 the nil ctx is the point
	require.PanicsWithValue(t, "sink: PushWait called with a nil ctx", func() { _ = s.Handle().PushWait(nil, ev{}) }) //nolint:staticcheck
}

// No lost wake-up: producers that only PushWait, with no deadline, into
// small rings drained by workers that keep freeing room, over shapes that
// take the wake-up from every side (pops, steals, bytes given back, held
// batches). Every value arrives exactly once and none waits out; a lost
// wake-up would leave a producer parked, and the test would hang until its
// 30 s guard fails it.
func TestPushWaitStressLosesNoWakeUp(t *testing.T) {
	shapes := []struct {
		name string
		cfg  func() sink.Config[blob]
	}{
		{"one shard", func() sink.Config[blob] { c := bytesCfg(1, 4, 2, 0, 0); c.SizeOf = nil; return c }},
		{"four shards stealing", func() sink.Config[blob] {
			c := bytesCfg(4, 4, 4, 0, 0)
			c.SizeOf, c.DisableStealing = nil, false
			return c
		}},
		{"bytes", func() sink.Config[blob] { return bytesCfg(2, 64, 4, 0, 200) }},
		{"MaxDelay", func() sink.Config[blob] {
			c := bytesCfg(2, 4, 4, 0, 0)
			c.SizeOf, c.MaxDelay = nil, 100*time.Microsecond
			return c
		}},
		{"DropOldest", func() sink.Config[blob] {
			c := bytesCfg(2, 4, 2, 0, 0)
			c.SizeOf, c.Overflow = nil, sink.DropOldest
			return c
		}},
	}
	for _, shape := range shapes {
		t.Run(shape.name, func(t *testing.T) {
			var mu sync.Mutex
			seen := map[int]int{}
			var calls atomic.Int64
			s := newSink(t, shape.cfg(), sink.ActionFunc[blob](func(_ context.Context, batch []blob) {
				if calls.Add(1)%8 == 0 {
					time.Sleep(50 * time.Microsecond) // a slow call now and then: the rings fill
				}
				mu.Lock()
				for _, b := range batch {
					seen[b.id]++
				}
				mu.Unlock()
			}))
			const producers, each = 16, 300
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			var failed atomic.Int64
			for p := range producers {
				wg.Go(func() {
					h := s.Handle()
					for i := range each {
						id := p*each + i
						v := blob{id, 10 + id%50}
						var err error
						if i%2 == 0 {
							err = h.PushWait(ctx, v)
						} else {
							err = s.PushWait(ctx, v)
						}
						if err != nil {
							failed.Add(1)
						}
					}
				})
			}
			wg.Wait()
			require.Zero(t, failed.Load(), "a PushWait gave up: a lost wake-up left it parked")
			flush(t, s)
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, seen, producers*each)
			for id, n := range seen {
				require.Equal(t, 1, n, "value %d", id)
			}
			st := s.Stats()
			require.Zero(t, st.Dropped)
			require.Zero(t, st.WaitedOut)
			require.Zero(t, st.Waiting)
			require.Equal(t, uint64(producers*each), st.Drained)
		})
	}
}

// The accounting identity with waited-out values: every push is drained,
// queued or dropped, and of the drops, WaitedOut are exactly the
// PushWait calls that returned their ctx's error.
func TestTheIdentityHoldsWithWaitedOutValues(t *testing.T) {
	var drained atomic.Int64
	s := newSink(t, testCfg(2, 4, 2), sink.ActionFunc[ev](func(_ context.Context, batch []ev) {
		time.Sleep(200 * time.Microsecond)
		drained.Add(int64(len(batch)))
	}))
	const producers, each = 8, 200
	var wg sync.WaitGroup
	var pushes, refused, waitedOut atomic.Int64
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				pushes.Add(1)
				switch i % 3 {
				case 0:
					if !s.Push(ev{p*each + i}) {
						refused.Add(1)
					}
				default:
					ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%5)*100*time.Microsecond)
					err := s.PushWait(ctx, ev{p*each + i})
					cancel()
					if err != nil {
						require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
						waitedOut.Add(1)
					}
				}
			}
		})
	}
	wg.Wait()
	flush(t, s)
	st := s.Stats()
	require.Equal(t, uint64(pushes.Load()), st.Drained+uint64(st.Queued)+st.Dropped)
	require.Equal(t, uint64(drained.Load()), st.Drained)
	require.Equal(t, uint64(waitedOut.Load()), st.WaitedOut)
	require.Equal(t, uint64(refused.Load()+waitedOut.Load()), st.Dropped)
	var perShard uint64
	for _, ps := range st.PerShard {
		perShard += ps.WaitedOut
		require.LessOrEqual(t, ps.WaitedOut, ps.Dropped)
	}
	require.Equal(t, st.WaitedOut, perShard)
	require.NotZero(t, st.WaitedOut, "the test must make some wait out")
}
