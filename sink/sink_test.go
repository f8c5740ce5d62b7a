package sink_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/allocs"
	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/chanring"
	"github.com/shardedsink/shardedsink/ring/mutex"
	"github.com/shardedsink/shardedsink/ring/vyukov"
	"github.com/shardedsink/shardedsink/sink"
)

// backends are the ring factories the behaviour tests run over.
var backends = []struct {
	name    string
	factory ring.Factory[ev]
}{
	{"vyukov", vyukov.Factory[ev]},
	{"mutex", mutex.Factory[ev]},
	{"chanring", chanring.Factory[ev]},
}

// Port of push_returns_true_when_accepted.
func TestPushReturnsTrueWhenAccepted(t *testing.T) {
	s := newSink(t, testCfg(4, 16, 4), nop[ev]())
	require.True(t, s.Handle().Push(ev{1}))
	require.True(t, s.Push(ev{2}))
	require.True(t, s.HandleFor(7).Push(ev{3}))
}

// Port of push_returns_false_and_counts_drop_when_ring_full.
func TestPushReturnsFalseAndCountsDropWhenRingFull(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			g := newGate[ev]()
			cfg := testCfg(1, 4, 1)
			cfg.Ring = b.factory
			s := newSink(t, cfg, g)
			t.Cleanup(g.release) // runs before the shutdown
			h := s.Handle()
			require.True(t, h.Push(ev{0}))
			g.waitEntered(t) // the worker holds ev{0} in Drain; the ring is empty
			for i := 1; i <= 4; i++ {
				require.True(t, h.Push(ev{i}), "push %d", i)
			}
			for i := 5; i < 15; i++ {
				require.False(t, h.Push(ev{i}), "push %d", i)
			}
			require.Equal(t, uint64(10), s.Dropped())
			require.False(t, s.Push(ev{99}), "a handle-less push into the same full ring")
			require.Equal(t, uint64(11), s.Dropped())
		})
	}
}

// The original accepted a push after Shutdown (no closed state) into a
// ring that nothing drains, uncounted. Here Shutdown closes the rings: a
// later push returns false and is counted as dropped, on every backend and
// under both overflow policies.
func TestPushAfterShutdownIsRefusedAndCounted(t *testing.T) {
	for _, b := range backends {
		for _, o := range []sink.Overflow{sink.DropNewest, sink.DropOldest} {
			if o == sink.DropOldest && b.name != "vyukov" {
				continue // only vyukov can displace
			}
			t.Run(b.name+"/"+o.String(), func(t *testing.T) {
				cfg := testCfg(2, 8, 4)
				cfg.Ring, cfg.Overflow = b.factory, o
				s, err := sink.New(cfg, nop[ev]())
				require.NoError(t, err)
				require.NoError(t, s.Shutdown(context.Background()))
				require.False(t, s.Handle().Push(ev{1}))
				require.False(t, s.Push(ev{2}))
				require.False(t, s.HandleFor(3).Push(ev{3}))
				require.Equal(t, uint64(3), s.Dropped())
				require.Zero(t, s.Stats().Queued)
			})
		}
	}
}

// Port of stats_total_equals_sum_of_shards.
func TestStatsTotalEqualsSumOfShards(t *testing.T) {
	g := newGate[ev]()
	s := newSink(t, testCfg(1, 2, 1), g)
	t.Cleanup(g.release)
	h := s.Handle()
	require.True(t, h.Push(ev{0}))
	g.waitEntered(t)
	for i := range 7 { // 2 fit, 5 overflow
		h.Push(ev{i + 1})
	}
	st := s.Stats()
	var sum uint64
	for _, ps := range st.PerShard {
		sum += ps.Dropped
	}
	require.Equal(t, uint64(5), st.Dropped)
	require.Equal(t, st.Dropped, sum)
	require.Equal(t, st.Dropped, s.Dropped())
}

// Port of issue_round_robin_uses_all_shards and round_robin_covers_all_shards:
// n consecutive handles cover the n shards.
func TestHandleRoundRobinCoversAllShards(t *testing.T) {
	for _, shards := range []int{1, 3, 4, 8} {
		t.Run(fmt.Sprint(shards), func(t *testing.T) {
			s := newSink(t, testCfg(shards, 1, 1), nop[ev]())
			seen := map[int]bool{}
			for range shards {
				seen[s.Handle().Shard()] = true
			}
			require.Len(t, seen, shards)
		})
	}
}

// Port of round_robin_is_in_bounds.
func TestHandleShardIsInBounds(t *testing.T) {
	s := newSink(t, testCfg(3, 1, 1), nop[ev]())
	for range 1000 {
		i := s.Handle().Shard()
		require.GreaterOrEqual(t, i, 0)
		require.Less(t, i, 3)
	}
	for k := range uint64(1000) {
		i := s.HandleFor(k * 0x9e3779b97f4a7c15).Shard()
		require.GreaterOrEqual(t, i, 0)
		require.Less(t, i, 3)
	}
}

// Port of home_shard_is_stable_on_same_thread and
// thread_local_home_is_stable_on_same_thread: in Go the stable home is keyed
// by the caller's key, not by the OS thread.
func TestHandleForIsStable(t *testing.T) {
	g := newGate[ev]()
	s := newSink(t, testCfg(4, 1, 1), g)
	t.Cleanup(g.release)
	for key := range uint64(50) {
		first := s.HandleFor(key)
		for range 100 {
			require.Same(t, first, s.HandleFor(key))
		}
	}
	// Two handles for one key share one ring of capacity 1: fill the
	// worker's batch first, then the ring, then overflow.
	a, b := s.HandleFor(42), s.HandleFor(42)
	require.True(t, a.Push(ev{0}))
	g.waitEntered(t)
	require.True(t, a.Push(ev{1}))
	require.False(t, b.Push(ev{2}))
	require.Equal(t, uint64(1), s.Dropped())
}

func TestHandleForSpreadsKeys(t *testing.T) {
	s := newSink(t, testCfg(8, 1, 1), nop[ev]())
	counts := make([]int, 8)
	for k := range uint64(8000) {
		counts[s.HandleFor(k).Shard()]++
	}
	for i, c := range counts {
		require.InDelta(t, 1000, c, 150, "shard %d got %d of 8000 sequential keys", i, c)
	}
}

// Port of handleless_round_robin_uses_all_shards: in Go the handle-less push
// keeps a home shard per goroutine (from its stack address) and spills into
// the next shard when the home ring is full, so one goroutine's burst fills
// two rings before anything is shed. (Workers are gated, so the rings only
// fill.)
//
// With CPU homes and more shards than CPUs, a burst fills every shard
// instead: cpugroup_test.go.
func TestHandlelessPushSpillsIntoOtherShards(t *testing.T) {
	sink.UseStackHomes(t)
	g := newGate[ev]()
	const shards, capacity = 4, 8
	s := newSink(t, testCfg(shards, capacity, 1), g)
	t.Cleanup(g.release)
	// Park every worker in the gate, holding one value each.
	for range shards {
		require.True(t, s.Handle().Push(ev{-1}))
	}
	g.waitEntered(t)
	eventually(t, func() bool { return s.Stats().Queued == 0 }, "every worker took its value")

	// One goroutine, one call site: its home ring fills, then the next
	// shard's ring takes the spill, and everything beyond is dropped and
	// counted.
	growStack() // so that the stack, and with it the home, stays put
	accepted := 0
	for i := range shards * capacity {
		if s.Push(ev{i}) {
			accepted++
		}
	}
	require.Equal(t, 2*capacity, accepted, "the home ring and the next one hold the burst")
	full := 0
	for _, ps := range s.Stats().PerShard {
		switch ps.Queued {
		case capacity:
			full++
		case 0:
		default:
			t.Errorf("shard %d holds %d values; want its ring full or empty", ps.Shard, ps.Queued)
		}
	}
	require.Equal(t, 2, full, "home and next")
	require.Equal(t, uint64(shards*capacity-accepted), s.Dropped())
}

// Port of no_loss_under_non_overload_conditions.
func TestNoLossUnderNonOverload(t *testing.T) {
	c := &collector[ev]{}
	s := newSink(t, testCfg(4, 4096, 128), c)
	accepted := 0
	for i := range 5000 {
		if s.Handle().Push(ev{i}) {
			accepted++
		}
		if i%256 == 0 {
			runtime.Gosched()
		}
	}
	require.Equal(t, 5000, accepted)
	require.Zero(t, s.Dropped())
	require.NoError(t, s.Shutdown(context.Background()))
	require.Equal(t, accepted, c.count())
}

// Port of work_stealing_drains_skewed_load_without_loss: all values go to one
// shard through one keyed handle, and the other workers steal from it.
func TestWorkStealingDrainsSkewedLoadWithoutLoss(t *testing.T) {
	c := &collector[ev]{}
	cfg := sink.Config[ev]{Shards: 4, RingCapacity: 16384, BatchSize: 64, OverloadInterval: time.Hour}
	s := newStealingSink(t, cfg, c, 3, 32)
	h := s.HandleFor(12345)
	var accepted []int
	for i := range 10000 {
		if h.Push(ev{i}) {
			accepted = append(accepted, i)
		}
		if i%128 == 0 {
			runtime.Gosched()
		}
	}
	require.NoError(t, s.Flush(context.Background()))
	got := make([]int, 0, len(accepted))
	for _, v := range c.values() {
		got = append(got, v.id)
	}
	slices.Sort(got)
	require.Equal(t, accepted, got, "every accepted value drained exactly once")
}

// The exactly-once property (port of accepted_items_are_observed_exactly_once),
// with concurrent producers using all three push paths.
func TestExactlyOnceUnderConcurrentProducers(t *testing.T) {
	for _, shards := range []int{1, 2, 4, 8} {
		for _, b := range backends {
			t.Run(fmt.Sprintf("shards=%d/%s", shards, b.name), func(t *testing.T) {
				c := &collector[ev]{}
				s := newSink(t, sink.Config[ev]{Shards: shards, RingCapacity: 8192, BatchSize: 128, Ring: b.factory, Logger: quiet}, c)
				const producers, per = 8, 2500
				accepted := make([][]int, producers)
				var wg sync.WaitGroup
				for p := range producers {
					wg.Go(func() {
						h := s.Handle()
						for i := range per {
							id := p*per + i
							var ok bool
							switch i % 3 {
							case 0:
								ok = h.Push(ev{id})
							case 1:
								ok = s.Push(ev{id})
							default:
								ok = s.HandleFor(uint64(p)).Push(ev{id})
							}
							if ok {
								accepted[p] = append(accepted[p], id)
							}
							if i%200 == 0 {
								runtime.Gosched()
							}
						}
					})
				}
				wg.Wait()
				require.NoError(t, s.Shutdown(context.Background()))
				var want []int
				for _, a := range accepted {
					want = append(want, a...)
				}
				got := make([]int, 0, len(want))
				for _, v := range c.values() {
					got = append(got, v.id)
				}
				slices.Sort(want)
				slices.Sort(got)
				require.Equal(t, want, got, "every accepted value drained exactly once")
				require.Equal(t, uint64(producers*per-len(want)), s.Dropped())
			})
		}
	}
}

func TestPushDoesNotAllocate(t *testing.T) {
	s := newSink(t, sink.Config[ev]{Shards: 4, RingCapacity: 1 << 16, BatchSize: 64}, nop[ev]())
	h := s.Handle()
	for i := range 256 { // warm up, as the original did
		h.Push(ev{i})
		s.Push(ev{i})
	}
	require.Less(t, allocs.PerCall(10000, func() { h.Push(ev{1}) }), allocs.Noise, "Handle.Push")
	require.Less(t, allocs.PerCall(10000, func() { s.Push(ev{1}) }), allocs.Noise, "Sink.Push")
	require.Less(t, allocs.PerCall(10000, func() { s.HandleFor(9).Push(ev{1}) }), allocs.Noise, "HandleFor + Push")
	require.Less(t, allocs.PerCall(10000, func() { s.Handle() }), allocs.Noise, "Handle")
}

func TestRejectedPushDoesNotAllocate(t *testing.T) {
	g := newGate[ev]()
	s := newSink(t, testCfg(2, 1, 1), g)
	t.Cleanup(g.release)
	// Handle hands out the two shards in turn: hold each worker in the gate
	// with one value, then fill each ring (capacity 1).
	h0, h1 := s.Handle(), s.Handle()
	require.NotEqual(t, h0.Shard(), h1.Shard())
	require.True(t, h0.Push(ev{0}))
	require.True(t, h1.Push(ev{0}))
	eventually(t, func() bool { return s.Stats().Drained == 2 }, "both workers took their value")
	require.True(t, h0.Push(ev{1}))
	require.True(t, h1.Push(ev{1}))

	accepted := 0
	push := func(ok bool) {
		if ok {
			accepted++
		}
	}
	require.Less(t, allocs.PerCall(10000, func() { push(h0.Push(ev{2})) }), allocs.Noise, "rejected Handle.Push")
	require.Less(t, allocs.PerCall(10000, func() { push(s.Push(ev{2})) }), allocs.Noise, "rejected Sink.Push")
	require.Zero(t, accepted, "every measured push was rejected")
	require.Equal(t, uint64(2*10001), s.Dropped(), "PerCall calls f once more than calls")
}
