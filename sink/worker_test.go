package sink_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

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
	require.GreaterOrEqual(t, c.count(), 40)
	out := buf.String()
	require.Contains(t, out, "level=ERROR")
	require.Contains(t, out, "Drain panicked")
	require.Contains(t, out, "sink=events shard=0")
	require.Contains(t, out, "panic=\"drain failed\"")
}

// Port of nonyielding_drain_does_not_starve_the_runtime. On one P, a Drain
// that never blocks (it pushes its batch straight back, so the ring never
// empties) must still let other goroutines run: the worker yields after
// every batch. A canary that yields too should then run about once per batch;
// without the worker's yield it would run once per 10 ms preemption slice.
func TestNonYieldingDrainDoesNotStarveOtherGoroutines(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var batches, canary atomic.Int64
	var stop atomic.Bool
	done := make(chan struct{})
	var h *sink.Handle[ev]
	s := newSink(t, testCfg(1, 1024, 64), sink.ActionFunc[ev](func(_ context.Context, batch []ev) {
		if stop.Load() {
			return
		}
		for _, v := range batch {
			h.Push(v)
		}
		if batches.Add(1) == 2000 {
			close(done)
		}
	}))
	h = s.Handle()
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
	<-done
	c, b := canary.Load(), batches.Load()
	stop.Store(true)
	wg.Wait()
	require.GreaterOrEqual(t, c, b/4, "the canary ran %d times in %d batches", c, b)
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
