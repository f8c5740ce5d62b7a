package sink_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/sinkhook"
	"github.com/shardedsink/shardedsink/sink"
)

// blob is a value that stands for size bytes.
type blob struct{ id, size int }

func blobSize(b blob) int { return b.size }

// bytesCfg is testCfg for blobs with a byte budget and a batch bound.
func bytesCfg(shards, ringCap, batch, maxBatchBytes, maxQueuedBytes int) sink.Config[blob] {
	return sink.Config[blob]{
		Shards:           shards,
		RingCapacity:     ringCap,
		BatchSize:        batch,
		OverloadInterval: time.Hour,
		DisableStealing:  true,
		Logger:           quiet,
		SizeOf:           blobSize,
		MaxBatchBytes:    maxBatchBytes,
		MaxQueuedBytes:   maxQueuedBytes,
	}
}

func TestNewRejectsBadByteBounds(t *testing.T) {
	size := func(ev) int { return 1 }
	cases := []struct {
		name string
		cfg  sink.Config[ev]
		want string
	}{
		{"a negative MaxBatchBytes", sink.Config[ev]{SizeOf: size, MaxBatchBytes: -1}, "MaxBatchBytes = -1: must be positive"},
		{"a negative MaxQueuedBytes", sink.Config[ev]{SizeOf: size, MaxQueuedBytes: -64}, "MaxQueuedBytes = -64: must be positive"},
		{"MaxBatchBytes without SizeOf", sink.Config[ev]{MaxBatchBytes: 4096}, "MaxBatchBytes = 4096: needs SizeOf"},
		{"MaxQueuedBytes without SizeOf", sink.Config[ev]{MaxQueuedBytes: 1 << 20}, "MaxQueuedBytes = 1048576: needs SizeOf"},
		{"SizeOf without a bound", sink.Config[ev]{SizeOf: size}, "SizeOf = github.com/shardedsink/shardedsink/sink_test.TestNewRejectsBadByteBounds.func1: is set but neither"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := sink.New(c.cfg, nop[ev]())
			require.Nil(t, s)
			require.ErrorIs(t, err, sink.ErrInvalidConfig)
			require.ErrorContains(t, err, c.want)
		})
	}
}

// A SizeOf that returns a negative size (or an absurd one) is a programmer's
// mistake: the push that got it panics and says so, and nothing is counted.
func TestANegativeSizePanicsInThePush(t *testing.T) {
	cfg := bytesCfg(1, 8, 4, 0, 1000)
	s := newSink(t, cfg, nop[blob]())
	const want = "sink: Config.SizeOf returned -1; a size must be between 0 and 2^48"
	require.PanicsWithValue(t, want, func() { s.Handle().Push(blob{size: -1}) })
	require.PanicsWithValue(t, want, func() { s.Push(blob{size: -1}) })
	if strconv.IntSize == 64 {
		var huge uint64 = 1<<48 + 1
		require.PanicsWithValue(t, "sink: Config.SizeOf returned 281474976710657; a size must be between 0 and 2^48",
			func() { s.Push(blob{size: int(huge)}) })
	}
	st := s.Stats()
	require.Zero(t, st.Dropped)
	require.Zero(t, st.QueuedBytes)
}

// The flood of issue 30, on the sink itself: a Drain that is stalled, eight
// goroutines pushing values of 64 KiB that the rings' slots alone would let
// pile up to 512 MiB. With MaxQueuedBytes = 1 MiB the sink holds at most
// 1 MiB of them (the values in the rings and the batch stuck in Drain), the
// heap says so, and every value is drained or dropped and counted: here
// every drop is for bytes, the slots never fill.
func TestAFloodOfLargeValuesIsBoundedInBytes(t *testing.T) {
	const (
		valueBytes = 64 << 10
		budget     = 1 << 20
		producers  = 8
		each       = 500
	)
	g := newGate[*[]byte]()
	cfg := sink.Config[*[]byte]{
		Shards:           2,
		RingCapacity:     8192,
		OverloadInterval: time.Hour,
		Logger:           quiet,
		SizeOf:           func(b *[]byte) int { return len(*b) },
		MaxQueuedBytes:   budget,
	}
	s := newSink(t, cfg, g)
	t.Cleanup(g.release)

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	var accepted, rejected atomic.Int64
	var wg sync.WaitGroup
	for range producers {
		wg.Go(func() {
			for range each {
				b := make([]byte, valueBytes)
				if s.Push(&b) {
					accepted.Add(1)
				} else {
					rejected.Add(1)
				}
			}
		})
	}
	wg.Wait()
	g.waitEntered(t)

	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	st := s.Stats()
	require.LessOrEqual(t, st.QueuedBytes, int64(budget), "stats %+v", st)
	require.LessOrEqual(t, accepted.Load()*valueBytes, int64(budget), "every accepted value is still held: Drain is stalled")
	// The heap holds what the sink holds, and the refused values were
	// freed; 1 MiB of slack for the test's own allocations and the rings.
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d of %d values of %d KiB accepted, %d bytes queued, heap grown by %d KiB over the flood",
		accepted.Load(), producers*each, valueBytes>>10, st.QueuedBytes, grown>>10)
	require.Less(t, grown, int64(budget)+1<<20, "the heap grew by %d bytes over the flood", grown)
	require.Equal(t, uint64(rejected.Load()), st.Dropped)
	require.Equal(t, st.Dropped, st.DroppedForBytes, "the slots never filled: every drop is for bytes")

	g.release()
	flush(t, s)
	st = s.Stats()
	require.Zero(t, st.QueuedBytes)
	require.Equal(t, uint64(accepted.Load()), st.Drained)
	require.Equal(t, int(accepted.Load()), g.count())
	require.Equal(t, int64(producers*each), accepted.Load()+rejected.Load())
}

// The bytes of a value are held until the Drain call that got it returns:
// a batch stuck in Drain still counts, so a stalled Drain cannot make the
// sink hold more than MaxQueuedBytes.
func TestBytesAreHeldUntilDrainReturns(t *testing.T) {
	g := newGate[blob]()
	s := newSink(t, bytesCfg(1, 8, 4, 0, 150), g)
	t.Cleanup(g.release)
	h := s.Handle()
	require.True(t, h.Push(blob{1, 100}))
	g.waitEntered(t)
	st := s.Stats()
	require.Zero(t, st.Queued, "the value is in Drain's batch")
	require.Equal(t, int64(100), st.QueuedBytes)
	require.False(t, h.Push(blob{2, 100}), "100 + 100 > 150")
	require.True(t, h.Push(blob{3, 50}), "100 + 50 <= 150")
	queued, share := sinkhook.ShardOf(h).QueuedBytes()
	require.Equal(t, []int64{150, 150}, []int64{queued, share})
	st = s.Stats()
	require.Equal(t, uint64(1), st.Dropped)
	require.Equal(t, uint64(1), st.DroppedForBytes)
	require.Equal(t, uint64(1), st.PerShard[0].DroppedForBytes)
	require.Equal(t, int64(150), st.PerShard[0].QueuedBytes)

	g.release()
	flush(t, s)
	require.Zero(t, s.Stats().QueuedBytes)
	require.True(t, h.Push(blob{4, 150}))
	flush(t, s)
	require.Equal(t, []blob{{1, 100}, {3, 50}, {4, 150}}, g.values())
}

// The budget is split over the shards, and Sink.Push tries the next shard
// when its home's share is spent, as it does when its home ring is full.
func TestTheBudgetIsSplitOverTheShards(t *testing.T) {
	g := newGate[blob]()
	s := newSink(t, bytesCfg(2, 8, 4, 0, 200), g)
	t.Cleanup(g.release)
	require.True(t, s.Push(blob{1, 100}))
	require.True(t, s.Push(blob{2, 100}), "the home's share (100) is spent: the next shard takes it")
	require.False(t, s.Push(blob{3, 100}), "both shares are spent")
	st := s.Stats()
	require.Equal(t, int64(200), st.QueuedBytes)
	require.Equal(t, []int64{100, 100}, []int64{st.PerShard[0].QueuedBytes, st.PerShard[1].QueuedBytes})
	require.Equal(t, uint64(1), st.DroppedForBytes)
	require.Equal(t, uint64(1), st.Dropped)
	_, share := sinkhook.ShardOf(s.HandleFor(0)).QueuedBytes()
	require.Equal(t, int64(100), share)
}

// A value larger than its shard's share goes in alone, into a shard that
// holds nothing, so that it is not refused for ever; while it is held, the
// shard takes nothing else.
func TestAValueLargerThanTheShareGoesInAlone(t *testing.T) {
	g := newGate[blob]()
	s := newSink(t, bytesCfg(1, 8, 4, 0, 100), g)
	t.Cleanup(g.release)
	h := s.Handle()
	require.True(t, h.Push(blob{1, 0}), "a value of no bytes")
	g.waitEntered(t)
	require.True(t, h.Push(blob{2, 500}), "larger than the share, into a shard that holds no bytes")
	require.False(t, h.Push(blob{3, 500}))
	require.False(t, h.Push(blob{4, 1}))
	require.Equal(t, int64(500), s.Stats().QueuedBytes)
	g.release()
	flush(t, s)
	require.True(t, h.Push(blob{5, 500}))
	flush(t, s)
	require.Equal(t, []blob{{1, 0}, {2, 500}, {5, 500}}, g.values())
	st := s.Stats()
	require.Equal(t, uint64(2), st.DroppedForBytes)
	require.Zero(t, st.QueuedBytes)
}

// Under DropOldest a push into a full ring displaces the oldest value, and
// the displaced value gives its bytes back; the byte budget itself sheds
// the pushed value, whatever Overflow says.
func TestDropOldestGivesTheDisplacedBytesBack(t *testing.T) {
	g := newGate[blob]()
	cfg := bytesCfg(1, 4, 1, 0, 1000)
	cfg.Overflow = sink.DropOldest
	s := newSink(t, cfg, g)
	t.Cleanup(g.release)
	h := s.Handle()
	require.True(t, h.Push(blob{0, 1}))
	g.waitEntered(t) // blob 0 is in Drain; the ring is empty
	for i := 1; i <= 10; i++ {
		require.True(t, h.Push(blob{i, 10 * i}))
	}
	// The ring holds 7 to 10; 1 to 6 were displaced.
	st := s.Stats()
	require.Equal(t, 4, st.Queued)
	require.Equal(t, uint64(6), st.Dropped)
	require.Zero(t, st.DroppedForBytes)
	require.Equal(t, int64(1+70+80+90+100), st.QueuedBytes)
	require.False(t, h.Push(blob{11, 700}), "1000 - 341 bytes are left: shed for bytes, not displacing")
	st = s.Stats()
	require.Equal(t, uint64(7), st.Dropped)
	require.Equal(t, uint64(1), st.DroppedForBytes)
	g.release()
	flush(t, s)
	require.Equal(t, []blob{{0, 1}, {7, 70}, {8, 80}, {9, 90}, {10, 100}}, g.values())
	require.Zero(t, s.Stats().QueuedBytes)
}

// A Drain call that panics or calls runtime.Goexit loses its batch, and
// the batch's bytes are given back all the same.
func TestBytesComeBackWhenDrainPanicsOrGoexits(t *testing.T) {
	logger, _ := testLogger()
	cfg := bytesCfg(1, 16, 4, 0, 1000)
	cfg.Logger = logger
	s := newSink(t, cfg, sink.ActionFunc[blob](func(_ context.Context, batch []blob) {
		switch batch[0].id {
		case 1:
			panic("drain failed")
		case 2:
			runtime.Goexit()
		}
	}))
	h := s.Handle()
	for id := 1; id <= 3; id++ {
		require.True(t, h.Push(blob{id, 300}))
		flush(t, s)
		require.Zero(t, s.Stats().QueuedBytes, "after the Drain call of blob %d", id)
	}
	require.Equal(t, uint64(2), s.Stats().DrainPanics)
}

// batchBytes is an Action that records every Drain call's values and
// fails the test when a call's sizes sum to more than limit with more than
// one value.
type batchBytes struct {
	t     testing.TB
	limit int
	mu    sync.Mutex
	calls [][]blob
	seen  map[int]bool
}

func (a *batchBytes) Drain(_ context.Context, batch []blob) {
	sum := 0
	for _, b := range batch {
		sum += b.size
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(batch) > 1 && sum > a.limit {
		a.t.Errorf("a Drain call of %d values and %d bytes, over MaxBatchBytes %d: %v", len(batch), sum, a.limit, batch)
	}
	for _, b := range batch {
		if a.seen[b.id] {
			a.t.Errorf("blob %d drained twice", b.id)
		}
		a.seen[b.id] = true
	}
	a.calls = append(a.calls, append([]blob(nil), batch...))
}

func (a *batchBytes) snapshot() [][]blob {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([][]blob(nil), a.calls...)
}

// Drain calls never sum to more than MaxBatchBytes but for one larger
// value, whatever the shape: stealing, MaxDelay, values in a range around
// the bound.
func TestBatchesStayWithinMaxBatchBytes(t *testing.T) {
	for _, shape := range []struct {
		name     string
		shards   int
		stealing bool
		maxDelay time.Duration
	}{
		{"one shard", 1, false, 0},
		{"four shards stealing", 4, true, 0},
		{"four shards stealing with MaxDelay", 4, true, time.Millisecond},
	} {
		t.Run(shape.name, func(t *testing.T) {
			const limit = 1000
			a := &batchBytes{t: t, limit: limit, seen: map[int]bool{}}
			cfg := bytesCfg(shape.shards, 1024, 64, limit, 0)
			cfg.DisableStealing = !shape.stealing
			cfg.MaxDelay = shape.maxDelay
			s := newSink(t, cfg, a)
			var wg sync.WaitGroup
			const producers, each = 4, 2000
			for p := range producers {
				wg.Go(func() {
					for i := range each {
						id := p*each + i
						size := (id * 7919) % 400 // 0 to 399 bytes
						if id%97 == 0 {
							size = 1500 // larger than the bound: alone
						}
						for !s.Push(blob{id, size}) {
							runtime.Gosched()
						}
					}
				})
			}
			wg.Wait()
			flush(t, s)
			require.Len(t, a.seen, producers*each)
			alone := 0
			for _, c := range a.snapshot() {
				if len(c) == 1 && c[0].size > limit {
					alone++
				}
			}
			require.Equal(t, (producers*each+96)/97, alone, "every value over the bound was drained alone")
		})
	}
}

// A round's values are cut into Drain calls in order: a value over the
// bound travels alone, and the values around it in calls of their own.
func TestAValueLargerThanMaxBatchBytesTravelsAlone(t *testing.T) {
	g := newGate[blob]()
	a := &batchBytes{t: t, limit: 100, seen: map[int]bool{}}
	var first atomic.Bool
	s := newSink(t, bytesCfg(1, 16, 16, 100, 0), sink.ActionFunc[blob](func(ctx context.Context, batch []blob) {
		if first.CompareAndSwap(false, true) {
			g.Drain(ctx, batch) // the primer holds the worker until the round below is in the ring
			return
		}
		a.Drain(ctx, batch)
	}))
	t.Cleanup(g.release)
	h := s.Handle()
	require.True(t, h.Push(blob{0, 1}))
	g.waitEntered(t)
	for _, b := range []blob{{1, 40}, {2, 40}, {3, 30}, {4, 500}, {5, 60}, {6, 60}} {
		require.True(t, h.Push(b))
	}
	g.release()
	flush(t, s)
	require.Equal(t, [][]blob{{{1, 40}, {2, 40}}, {{3, 30}}, {{4, 500}}, {{5, 60}}, {{6, 60}}}, a.snapshot())
}

// When a Drain call in a round that MaxBatchBytes cut calls runtime.Goexit,
// the values of the round's later calls are not lost: the worker's new
// goroutine hands them to Drain, and Flush waits for them.
func TestAGoexitInACutRoundLosesOnlyItsOwnBatch(t *testing.T) {
	logger, _ := testLogger()
	g := newGate[blob]()
	var mu sync.Mutex
	var calls [][]blob
	var first atomic.Bool
	cfg := bytesCfg(1, 16, 16, 100, 1000)
	cfg.Logger = logger
	s := newSink(t, cfg, sink.ActionFunc[blob](func(ctx context.Context, batch []blob) {
		if first.CompareAndSwap(false, true) {
			g.Drain(ctx, batch)
			return
		}
		mu.Lock()
		calls = append(calls, append([]blob(nil), batch...))
		mu.Unlock()
		if batch[0].id == 2 {
			runtime.Goexit()
		}
		if batch[0].id == 3 {
			panic("drain failed")
		}
	}))
	t.Cleanup(g.release)
	h := s.Handle()
	require.True(t, h.Push(blob{0, 1}))
	g.waitEntered(t)
	for id := 1; id <= 5; id++ {
		require.True(t, h.Push(blob{id, 100}))
	}
	g.release()
	flush(t, s)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, [][]blob{{{1, 100}}, {{2, 100}}, {{3, 100}}, {{4, 100}}, {{5, 100}}}, calls)
	st := s.Stats()
	require.Equal(t, uint64(2), st.DrainPanics)
	require.Zero(t, st.QueuedBytes)
	require.Equal(t, uint64(6), st.Drained)
}

// MaxDelay holds a short batch only while it is short of MaxBatchBytes too:
// a batch that reaches the bound in bytes goes to Drain at once.
func TestMaxDelayDoesNotHoldABatchFullInBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var calls []int
		cfg := bytesCfg(1, 64, 64, 100, 0)
		cfg.MaxDelay = time.Hour
		s := sink.MustNew(cfg, sink.ActionFunc[blob](func(_ context.Context, batch []blob) {
			mu.Lock()
			calls = append(calls, len(batch))
			mu.Unlock()
		}))
		h := s.Handle()
		require.True(t, h.Push(blob{1, 60}))
		synctest.Wait()
		mu.Lock()
		require.Empty(t, calls, "60 bytes of 100: the batch is held")
		mu.Unlock()
		require.True(t, h.Push(blob{2, 60}))
		synctest.Wait()
		mu.Lock()
		require.Equal(t, []int{1, 1}, calls, "120 bytes: drained at once, in two calls")
		mu.Unlock()
		start := time.Now()
		require.NoError(t, s.Shutdown(context.Background()))
		require.Zero(t, time.Since(start), "no MaxDelay was waited for")
	})
}

// Without SizeOf nothing is counted in bytes.
func TestStatsCountNoBytesWithoutABudget(t *testing.T) {
	s := newSink(t, testCfg(2, 4, 1), nop[ev]())
	h := s.Handle()
	for i := range 10 {
		h.Push(ev{i})
	}
	flush(t, s)
	st := s.Stats()
	require.Zero(t, st.QueuedBytes)
	require.Zero(t, st.DroppedForBytes)
	q, share := sinkhook.ShardOf(h).QueuedBytes()
	require.Zero(t, q)
	require.Zero(t, share)
}

// ExampleConfig_maxQueuedBytes bounds the memory a sink of buffers holds.
func ExampleConfig_maxQueuedBytes() {
	s := sink.MustNew(sink.Config[[]byte]{
		Shards:         1,
		SizeOf:         func(b []byte) int { return len(b) },
		MaxQueuedBytes: 1 << 20, // at most 1 MiB of buffers in the ring and in Drain
		MaxBatchBytes:  4 << 20, // Drain calls of at most 4 MiB (the budget keeps them at 1 MiB here)
	}, sink.ActionFunc[[]byte](func(_ context.Context, batch [][]byte) {}))
	defer func() { _ = s.Shutdown(context.Background()) }()
	fmt.Println(s.Push(make([]byte, 512<<10)), s.Push(make([]byte, 512<<10)))
	st := s.Stats()
	fmt.Println(st.QueuedBytes <= 1<<20, st.Dropped == st.DroppedForBytes)
	// Output:
	// true true
	// true true
}

// Pushes that race into a shard whose share fits one value admit one: the
// load before the add lets them all through, and the add tells them apart.
func TestRacingPushesNeverOvershootTheShare(t *testing.T) {
	const racers = 8
	for trial := range 200 {
		g := newGate[blob]()
		s := sink.MustNew(bytesCfg(1, 64, 64, 0, 100), g)
		h := s.Handle()
		require.True(t, h.Push(blob{-1, 0})) // holds the worker in Drain
		g.waitEntered(t)
		var start, done sync.WaitGroup
		start.Add(1)
		var accepted atomic.Int64
		for r := range racers {
			done.Go(func() {
				start.Wait()
				if h.Push(blob{r, 60}) {
					accepted.Add(1)
				}
			})
		}
		start.Done()
		done.Wait()
		q, _ := sinkhook.ShardOf(h).QueuedBytes()
		g.release()
		require.NoError(t, s.Shutdown(context.Background()))
		require.Equal(t, int64(1), accepted.Load(), "trial %d: 60-byte values into a share of 100", trial)
		require.Equal(t, int64(60), q, "trial %d", trial)
		require.Zero(t, s.Stats().QueuedBytes)
	}
}

// A value that stands for no bytes takes none: it is admitted whatever the
// shard holds, a value larger than its share included, and is refused only
// when the ring is full, counted as a drop for slots, not for bytes.
func TestAValueOfNoBytesIsAdmittedWhateverTheShardHolds(t *testing.T) {
	g := newGate[blob]()
	s := newSink(t, bytesCfg(1, 4, 1, 0, 100), g)
	t.Cleanup(g.release)
	h := s.Handle()
	require.True(t, h.Push(blob{1, 0}))
	g.waitEntered(t) // the worker holds blob 1 in Drain
	require.True(t, h.Push(blob{2, 500}), "larger than the share, into a shard that holds no bytes")
	require.False(t, h.Push(blob{3, 1}), "the share is spent")
	require.True(t, h.Push(blob{4, 0}), "a value of no bytes takes none")
	require.True(t, h.Push(blob{5, 0}))
	require.True(t, h.Push(blob{6, 0}))
	require.False(t, h.Push(blob{7, 0}), "the ring is full in slots")
	st := s.Stats()
	require.Equal(t, int64(500), st.QueuedBytes)
	require.Equal(t, uint64(2), st.Dropped)
	require.Equal(t, uint64(1), st.DroppedForBytes, "blob 7 was refused for slots")
	g.release()
	flush(t, s)
	require.Equal(t, []blob{{1, 0}, {2, 500}, {4, 0}, {5, 0}, {6, 0}}, g.values())
	require.Zero(t, s.Stats().QueuedBytes)
}
