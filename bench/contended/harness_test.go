package main

import (
	"context"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/bench/internal/report"
	"github.com/shardedsink/shardedsink/ring/vyukov"
)

func TestPercentileRule(t *testing.T) {
	t.Run("it indexes sorted[round(p*(n-1))]", func(t *testing.T) {
		sorted := make([]int64, 1000)
		for i := range sorted {
			sorted[i] = int64(i + 1)
		}
		require.Equal(t, int64(990), report.Percentile(sorted, 0.99))  // round(989.01) = 989
		require.Equal(t, int64(999), report.Percentile(sorted, 0.999)) // round(998.001) = 998
		require.Equal(t, int64(1000), report.Percentile(sorted, 1))    // the maximum
	})
	t.Run("tail sorts and returns p99, p99.9 and max", func(t *testing.T) {
		lat := make([]int64, 1000)
		for i := range lat {
			lat[i] = int64(i + 1)
		}
		rand.Shuffle(len(lat), func(i, j int) { lat[i], lat[j] = lat[j], lat[i] })
		p99, p999, maxNs := tail(lat)
		require.Equal(t, 990.0, p99)
		require.Equal(t, 999.0, p999)
		require.Equal(t, 1000.0, maxNs)
	})
}

func TestRingSizing(t *testing.T) {
	t.Run("sharded rings hold the burst of the busiest shard plus 1024", func(t *testing.T) {
		require.Equal(t, 64*22000+1024, shardedCapacity(256, 4, 20000))
		require.Equal(t, 22000+1024, shardedCapacity(1, 4, 20000))
		require.Equal(t, 22000+1024, shardedCapacity(4, 4, 20000))
		require.Equal(t, 2*110+1024, shardedCapacity(5, 4, 100)) // ceil(5/4) = 2
	})
	t.Run("single rings and the 1-shard sink hold every producer's burst plus 1024", func(t *testing.T) {
		require.Equal(t, 256*22000+1024, singleCapacity(256, 20000))
		require.Equal(t, 110+1024, singleCapacity(1, 100))
		require.Equal(t, singleCapacity(7, 333), shardedCapacity(7, 1, 333))
	})
	t.Run("warm-up is a tenth and the burst is items plus warm-up", func(t *testing.T) {
		sz := sizing{producers: 3, per: 20000, shards: 4}
		require.Equal(t, 2000, sz.warmup())
		require.Equal(t, 22000, sz.burst())
	})
	t.Run("a ring of that size accepts the whole burst", func(t *testing.T) {
		const producers, shards, per = 5, 4, 100
		r := vyukov.New[Event](shardedCapacity(producers, shards, per))
		for i := range (producers + shards - 1) / shards * (per + per/10) {
			require.True(t, r.TryPush(value[Event](uint64(i))))
		}
	})
	t.Run("the item cap keeps a capped ring within its limit", func(t *testing.T) {
		for _, p := range []int{1, 4, 16, 64, 128, 256, 1000} {
			per := maxPerFor(65536, p, 4)
			require.LessOrEqual(t, shardedCapacity(p, 4, per), 65536, "producers %d", p)
			if per > 10 {
				require.Greater(t, shardedCapacity(p, 4, per+1), 65536, "producers %d: per %d is not the largest", p, per)
			}
		}
		require.Equal(t, 917, maxPerFor(65536, 256, 4)) // 64*(917+91)+1024 = 65,536
	})
}

func TestPrefaultLeavesTheRingEmptyAndCyclesPastCapacity(t *testing.T) {
	require.Equal(t, 1, nextPow2(1))
	require.Equal(t, 8, nextPow2(5))
	require.Equal(t, 8, nextPow2(8))
	r := vyukov.New[uint64](5)
	prefault[uint64](r)
	require.Zero(t, r.Len())
	for i := range 5 {
		require.True(t, r.TryPush(uint64(i)), "the whole capacity is free after prefault")
	}
}

func TestPayloads(t *testing.T) {
	require.EqualValues(t, 32, unsafe.Sizeof(Event{}))
	require.Equal(t, 32, payloadBytes[Event]())
	require.Equal(t, 8, payloadBytes[uint64]())
	id := eventID(3, 7)
	require.Equal(t, uint64(3)<<40|7, id)
	ev := value[Event](id)
	require.Equal(t, id, ev.RequestID[0])
	require.Equal(t, id, idOf(&ev))
	require.Equal(t, id, value[uint64](id))
	require.NotEqual(t, value[Event](eventID(3, 8)), ev)
}

func TestNotifyRingCountsEverySuccessfulPush(t *testing.T) {
	r := notifyFactory[uint64](2).(*notifyRing[uint64])
	require.Equal(t, 2, r.Cap())
	require.True(t, r.TryPush(1))
	require.True(t, r.TryPush(2))
	require.False(t, r.TryPush(3), "full")
	require.EqualValues(t, 2, r.wake, "a refused push notifies nobody")
	v, ok := r.TryPop()
	require.True(t, ok)
	require.EqualValues(t, 1, v)
	require.EqualValues(t, 2, r.seen, "the consumer read the wake word")
	require.Equal(t, 1, r.Len())
	wake := uintptr(unsafe.Pointer(&r.wake))
	require.GreaterOrEqual(t, wake-uintptr(unsafe.Pointer(r)), uintptr(cacheLinePad), "the wake word has its own lines")
	require.GreaterOrEqual(t, uintptr(unsafe.Pointer(&r.seen))-wake, uintptr(cacheLinePad))
}

// rowsUnderTest runs one tiny row of every family in both consumer modes.
func TestEveryRowRunsInBothModes(t *testing.T) {
	sz := sizing{producers: 3, per: 500, shards: 2}
	for _, mode := range []consumerMode{held, draining} {
		for _, im := range impls[uint64]() {
			t.Run(mode.String()+"/"+im.name, func(t *testing.T) {
				row, err := measure(im, sz, mode, 2)
				require.NoError(t, err)
				require.Len(t, row.CPUNsTrials, 2)
				require.Positive(t, row.CPUNsPerOp)
				require.LessOrEqual(t, row.CPUNsMin, row.CPUNsPerOp)
				require.GreaterOrEqual(t, row.CPUNsMax, row.CPUNsPerOp)
				require.Positive(t, row.ProcCPUNsPerOp)
				require.Positive(t, row.ThroughputPerS)
				if mode == held {
					require.Zero(t, row.Counters.Consumed, "held: nobody pops during a trial")
				}
				if !im.spurious {
					require.Zero(t, row.DropPct)
				}
			})
		}
	}
}

func TestHeldSinkWorkersPopNothingWhileProducersPush(t *testing.T) {
	for _, im := range []*impl[uint64]{shardedImpl("sharded-vyukov", vyukov.Factory[uint64]), defaultImpl[uint64]()} {
		setup, err := im.setup(sizing{producers: 8, per: 1000, shards: 4}, held)
		require.NoError(t, err)
		inst, err := setup.trial()
		require.NoError(t, err)
		si := inst.(*sinkInstance[uint64])
		push := inst.pusher()
		for i := range 2000 {
			require.True(t, push(uint64(i)))
		}
		require.Zero(t, inst.consumed(), im.name)
		require.Equal(t, int64(si.s.Shards()), si.entered.Load(), "%s: every worker waits in Drain", im.name)
		require.NoError(t, inst.stop(context.Background()))
		for _, r := range si.rings {
			require.Zero(t, r.Len(), "stop leaves the rings empty for the next trial")
		}
	}
}
