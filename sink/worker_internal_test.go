package sink

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/layout"
)

// bare builds a sink whose workers are not started, so that a test can drive
// one worker's burst and steal by hand.
func bare(t *testing.T, c Config[int]) *Sink[int] {
	t.Helper()
	s, err := build(c, nopAction)
	require.NoError(t, err)
	return s
}

// stealing sets s's steal budgets, as the sink's benchmarks vary them.
func stealing(s *Sink[int], victims, items int) *Sink[int] {
	s.cfg.steal(victims, items, false)
	return s
}

func fill(t *testing.T, s *Sink[int], shard, n int) {
	t.Helper()
	for i := range n {
		require.True(t, s.handles[shard].Push(shard*1000+i))
	}
}

// Port of drain_burst_stops_at_batch.
func TestBurstStopsAtBatch(t *testing.T) {
	s := bare(t, Config[int]{Shards: 1, RingCapacity: 64, BatchSize: 10})
	fill(t, s, 0, 50)
	w := newWorker(s, 0, nil)
	require.Equal(t, 10, w.burst())
	require.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, w.batch, "FIFO within the shard")
	require.Equal(t, 40, s.shards[0].ring.Len())
	require.Equal(t, uint64(10), s.shards[0].handed.Load())
}

// Port of drain_burst_stops_when_empty.
func TestBurstStopsWhenEmpty(t *testing.T) {
	s := bare(t, Config[int]{Shards: 1, RingCapacity: 128, BatchSize: 100})
	fill(t, s, 0, 5)
	w := newWorker(s, 0, nil)
	require.Equal(t, 5, w.burst())
	require.Zero(t, s.shards[0].ring.Len())
	require.Zero(t, w.burst())
}

// Port of steal_respects_victim_and_item_budgets.
func TestStealRespectsVictimAndItemBudgets(t *testing.T) {
	s := stealing(bare(t, Config[int]{Shards: 4, RingCapacity: 16, BatchSize: 100}), 2, 3)
	for i := range 4 {
		fill(t, s, i, 16)
	}
	w := newWorker(s, 0, nil)
	require.Equal(t, 6, w.steal())
	require.Equal(t, []int{1000, 1001, 1002, 2000, 2001, 2002}, w.batch, "victims in round-robin order after home")
	require.Equal(t, 16, s.shards[0].ring.Len(), "stealing never touches home")
	require.Equal(t, uint64(3), s.shards[1].handed.Load())
	require.Equal(t, uint64(3), s.shards[2].handed.Load())

	// The cursor persists: the next round starts at shard 3, skips home and
	// wraps to shard 1.
	require.Equal(t, 6, w.steal())
	require.Equal(t, []int{3000, 3001, 3002, 1003, 1004, 1005}, w.batch[6:])
}

// Port of steal_skips_home_shard.
func TestStealSkipsHomeShard(t *testing.T) {
	s := stealing(bare(t, Config[int]{Shards: 4, RingCapacity: 16, BatchSize: 100}), 3, 8)
	fill(t, s, 2, 10)
	w := newWorker(s, 2, nil)
	require.Zero(t, w.steal())
	require.Equal(t, 10, s.shards[2].ring.Len())
}

// Port of steal_is_bounded_when_batch_nearly_full.
func TestStealIsBoundedWhenBatchNearlyFull(t *testing.T) {
	s := stealing(bare(t, Config[int]{Shards: 5, RingCapacity: 200, BatchSize: 2}), 4, 100)
	for i := range 5 {
		fill(t, s, i, 100)
	}
	w := newWorker(s, 0, nil)
	require.Equal(t, 2, w.steal())
	require.Len(t, w.batch, 2)

	w.batch = w.batch[:0]
	w.batch = append(w.batch, -1)
	require.Equal(t, 1, w.steal(), "only the room left in the batch")
}

func TestStealSkipsABusyVictim(t *testing.T) {
	s := stealing(bare(t, Config[int]{Shards: 4, RingCapacity: 16, BatchSize: 100}), 2, 4)
	for i := range 4 {
		fill(t, s, i, 16)
	}
	s.shards[1].mu.Lock() // its home worker is in a burst
	w := newWorker(s, 0, nil)
	require.Equal(t, 4, w.steal(), "shard 1 counts as a victim tried but is skipped")
	require.Equal(t, []int{2000, 2001, 2002, 2003}, w.batch)
	require.Equal(t, 16, s.shards[1].ring.Len())
	s.shards[1].mu.Unlock()
}

func TestBurstAndStealFillOneBatch(t *testing.T) {
	s := stealing(bare(t, Config[int]{Shards: 2, RingCapacity: 16, BatchSize: 8}), defaultStealVictims, 8)
	fill(t, s, 0, 3)
	fill(t, s, 1, 16)
	w := newWorker(s, 0, nil)
	require.Equal(t, 3, w.burst())
	require.Equal(t, 5, w.steal(), "stealing tops the batch up to BatchSize")
	require.Len(t, w.batch, 8)
}

func TestWakeHelperRingsOneSleepingWorker(t *testing.T) {
	s := bare(t, Config[int]{Shards: 3, RingCapacity: 4})
	s.shards[1].setSleeping(true)
	s.shards[2].setSleeping(true)
	s.wakeHelper(0)
	require.Zero(t, atomic.LoadUint32(&s.shards[1].sleeping), "the next sleeping shard after home is woken")
	require.Len(t, s.shards[1].doorbell, 1)
	require.Equal(t, uint32(1), atomic.LoadUint32(&s.shards[2].sleeping), "only one")
	require.Empty(t, s.shards[2].doorbell)
}

// Many producers push at once into the ring of a sleeping worker: exactly
// one of them rings. The doorbell gets one slot per producer here (it has
// one in a sink), so that a second ring would show as a second token
// instead of being absorbed by the full slot.
func TestWakeRingsOnceForManyProducers(t *testing.T) {
	const producers, per = 8, 8
	s := bare(t, Config[int]{Shards: 1, RingCapacity: producers * per})
	sh := &s.shards[0]
	sh.doorbell = make(chan struct{}, producers)
	for round := range 200 {
		sh.setSleeping(true)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for p := range producers {
			wg.Go(func() {
				<-start
				for i := range per {
					if !s.handles[0].Push(p*per + i) {
						panic("a push into a ring with room was rejected")
					}
				}
			})
		}
		close(start)
		wg.Wait()
		require.False(t, sh.isSleeping(), "round %d", round)
		require.Len(t, sh.doorbell, 1, "round %d: the producer whose swap cleared the flag rang, and no other", round)
		<-sh.doorbell
		for range producers * per {
			_, ok := sh.ring.TryPop()
			require.True(t, ok)
		}
	}
}

// With a home per CPU or from the stack, a full home moves the push on to
// one more shard (groups of shards, where every shard is tried, are
// cpugroup_test.go's).
func TestSinkPushMovesOnWhenItsHomeIsFull(t *testing.T) {
	useStackHomes(t)
	s := bare(t, Config[int]{Shards: 3, RingCapacity: 2})
	// This goroutine's home, from the address of its stack: the shard its
	// first push lands in, and the next one.
	require.True(t, s.Push(0))
	home := -1
	for i := range s.shards {
		if s.shards[i].ring.Len() == 1 {
			home = i
		}
	}
	require.NotEqual(t, -1, home, "the first push landed nowhere")
	next := (home + 1) % len(s.shards)
	other := (home + 2) % len(s.shards)
	// The home ring is full, so the push moves on to the next shard.
	fill(t, s, home, 1)
	require.True(t, s.Push(1))
	require.Equal(t, 1, s.shards[next].ring.Len())
	require.Zero(t, s.Dropped())

	// Home and next full: two tries and one drop, counted on the next
	// shard; the third ring is never tried.
	fill(t, s, next, 1)
	require.False(t, s.Push(2))
	require.Equal(t, uint64(1), s.Dropped())
	require.Equal(t, uint64(1), s.shards[next].fullCount())
	require.Zero(t, s.shards[other].ring.Len())
}

func TestStackHomeIsStableAndInRange(t *testing.T) {
	for n := 1; n <= 64; n++ {
		// No calls between the reads: a call could grow and move the
		// stack, and the home with it.
		var homes [10]int
		for i := range homes {
			homes[i] = stackHome(n)
		}
		for _, h := range homes {
			require.GreaterOrEqual(t, h, 0)
			require.Less(t, h, n)
			require.Equal(t, homes[0], h, "n=%d: the same call site moved", n)
		}
	}
}

func TestSingleShardPushDoesNotRetry(t *testing.T) {
	s := bare(t, Config[int]{Shards: 1, RingCapacity: 1})
	require.True(t, s.Push(1))
	require.False(t, s.Push(2))
	require.Equal(t, uint64(1), s.Dropped())
}

// The padding keeps the producer block, the drop counter and the consumer
// block of every shard in 128-byte blocks of their own, whatever the
// alignment of the slice (Go puts an 8-byte header before larger objects that
// hold pointers).
func TestShardLayout(t *testing.T) {
	var sh shard[int]
	require.Equal(t, uintptr(3*layout.CacheLine), unsafe.Sizeof(sh))
	require.Equal(t, uintptr(layout.CacheLine), unsafe.Offsetof(sh.full))
	require.Equal(t, uintptr(2*layout.CacheLine), unsafe.Offsetof(sh.mu))
	require.Equal(t, uintptr(3*layout.CacheLine), unsafe.Sizeof(shard[[64]byte]{}), "independent of T")

	type group struct{ from, to uintptr } // [from, to) in bytes
	for n := 1; n <= 8; n++ {
		s := bare(t, Config[int]{Shards: n, RingCapacity: 1})
		owner := map[uintptr]string{} // 128-byte block -> the group in it
		for i := range s.shards {
			sh := &s.shards[i]
			for name, g := range map[string]group{
				"producer": {uintptr(unsafe.Pointer(&sh.ring)), uintptr(unsafe.Pointer(&sh.sleeping)) + 4},
				"dropped":  {uintptr(unsafe.Pointer(&sh.full)), uintptr(unsafe.Pointer(&sh.slow)) + unsafe.Sizeof(sh.slow)},
				"consumer": {uintptr(unsafe.Pointer(&sh.mu)), uintptr(unsafe.Pointer(&sh.panics)) + 8},
			} {
				label := fmt.Sprintf("shard %d %s", i, name)
				for b := g.from / layout.CacheLine; b <= (g.to-1)/layout.CacheLine; b++ {
					if other, ok := owner[b]; ok {
						t.Fatalf("%d shards: %s shares a 128-byte block with %s", n, label, other)
					}
					owner[b] = label
				}
			}
		}
	}
}

func TestShardForIsStableAndInRange(t *testing.T) {
	for n := 1; n <= 9; n++ {
		for k := range uint64(1000) {
			i := shardFor(k, n)
			require.GreaterOrEqual(t, i, 0)
			require.Less(t, i, n)
			require.Equal(t, i, shardFor(k, n))
		}
	}
}

// A Drain call that calls runtime.Goexit in a round that MaxBatchBytes cut
// leaves the values of the round's later calls at the front of the batch,
// with their sizes, for the goroutine that takes over.
func TestAGoexitLeavesTheRestOfACutRoundAtTheFront(t *testing.T) {
	var calls atomic.Int32
	s, err := build(Config[int]{Shards: 1, RingCapacity: 16, BatchSize: 16, Logger: slog.New(slog.DiscardHandler),
		SizeOf: func(v int) int { return v }, MaxBatchBytes: 10},
		ActionFunc[int](func(_ context.Context, batch []int) {
			if calls.Add(1) == 2 {
				runtime.Goexit()
			}
		}))
	require.NoError(t, err)
	for _, v := range []int{6, 7, 8, 9, 3} {
		require.True(t, s.handles[0].Push(v))
	}
	w := newWorker(s, 0, nil)
	require.Equal(t, 5, w.burst())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.drain(context.Background())
	}()
	<-done
	require.Equal(t, []int{8, 9, 3}, w.batch, "6 was drained, 7 lost to the Goexit")
	require.Equal(t, []valueMeta{{size: 8}, {size: 9}, {size: 3}}, w.meta)
	require.Equal(t, int64(20), w.batchBytes)
	require.Zero(t, w.off)
	require.True(t, w.leaving)
}

// Two goroutines that reserve 60 bytes of a share of 100 over and over are
// never both admitted at once: the load before the add lets both through
// when they race, and the add must tell them apart. (On one CPU the race
// is rare and the test mostly checks the sequential case.)
func TestReserveAdmitsOneOfTwoRacingValues(t *testing.T) {
	s := bare(t, Config[int]{Shards: 1, RingCapacity: 1, SizeOf: func(int) int { return 60 }, MaxQueuedBytes: 100})
	b := s.shards[0].slow.budget
	var inside, both atomic.Int32
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for range 200_000 {
				if !b.reserve(60) {
					continue
				}
				// Hold the admission a little, so that a second one
				// that should not have been made meets this one.
				if inside.Add(1) > 1 {
					both.Add(1)
				}
				for range 64 {
					if inside.Load() > 1 {
						both.Add(1)
					}
				}
				inside.Add(-1)
				b.release(60)
			}
		})
	}
	wg.Wait()
	require.Zero(t, both.Load(), "two 60-byte values were admitted at once into a share of 100")
	require.Zero(t, s.shards[0].heldBytes())
}
