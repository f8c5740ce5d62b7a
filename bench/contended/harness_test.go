package main

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
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
	t.Run("every ring holds a round, the values that prime held workers and a chunk", func(t *testing.T) {
		require.Equal(t, 1<<20+1024+chunk, ringCapacity(1<<20))
	})
	t.Run("a ring of that size takes a whole round on top of the primed values", func(t *testing.T) {
		const round = 5000
		r := vyukov.New[Event](ringCapacity(round))
		for i := range round + 1024 {
			require.True(t, r.TryPush(value[Event](uint64(i))))
		}
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

// tinySizing is a row small enough for a unit test: 3 producers, 2
// shards, a 3 ms window in rounds of 4 chunks.
var tinySizing = sizing{producers: 3, shards: 2, window: 3 * time.Millisecond, round: 4 * chunk}

func TestEveryRowRunsInBothModes(t *testing.T) {
	for _, mode := range []consumerMode{held, draining} {
		for _, im := range impls[uint64]() {
			t.Run(mode.String()+"/"+im.name, func(t *testing.T) {
				row, err := measure(im, tinySizing, mode, 2)
				require.NoError(t, err)
				require.Len(t, row.CPUNsTrials, 2)
				require.Positive(t, row.CPUNsPerOp)
				require.LessOrEqual(t, row.CPUNsMin, row.CPUNsPerOp)
				require.GreaterOrEqual(t, row.CPUNsMax, row.CPUNsPerOp)
				require.Positive(t, row.ProcCPUNsPerOp)
				require.Positive(t, row.ThroughputPerS)
				require.GreaterOrEqual(t, row.Rounds, 1.0)
				require.Len(t, row.PushesTrials, 2)
				require.Len(t, row.ParallelismTrials, 2)
				require.InDelta(t, validFloor(3, runtime.GOMAXPROCS(0)), row.ParallelismFloor, 1e-9)
				require.Equal(t, row.Parallelism >= row.ParallelismFloor, row.Valid)
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
		setup, err := im.setup(sizing{producers: 8, shards: 4, window: time.Millisecond, round: 2000}, held)
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

func TestEmptyingBetweenRoundsLeavesRoomForTheNextRound(t *testing.T) {
	for _, mode := range []consumerMode{held, draining} {
		t.Run(mode.String(), func(t *testing.T) {
			im := shardedImpl("sharded-vyukov", vyukov.Factory[uint64])
			setup, err := im.setup(sizing{producers: 1, shards: 2, window: time.Millisecond, round: 3000}, mode)
			require.NoError(t, err)
			inst, err := setup.trial()
			require.NoError(t, err)
			push := inst.pusher()
			for i := range 3000 {
				require.True(t, push(uint64(i)), "push %d: the round fits", i)
			}
			ctx := context.Background()
			require.NoError(t, inst.empty(ctx, 3000))
			si := inst.(*sinkInstance[uint64])
			if mode == held {
				for _, r := range si.rings {
					require.Zero(t, r.Len(), "held: the harness popped what was left")
				}
				require.Zero(t, inst.consumed(), "held: the workers took nothing")
			} else {
				require.GreaterOrEqual(t, inst.consumed(), int64(3000), "draining: the workers took it all")
			}
			require.NoError(t, inst.stop(ctx))
		})
	}
}
