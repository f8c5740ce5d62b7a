package main

import (
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
		require.Equal(t, int64(990), report.Percentile(sorted, 0.99))   // round(989.01) = 989
		require.Equal(t, int64(999), report.Percentile(sorted, 0.999))  // round(998.001) = 998
		require.Equal(t, int64(1000), report.Percentile(sorted, 1))     // the maximum
		require.Equal(t, int64(501), report.Percentile(sorted, 0.5))    // round(499.5) = 500, half away from zero
		require.Equal(t, int64(1), report.Percentile(sorted, 0))        // the minimum
		require.Equal(t, int64(11), report.Percentile(sorted, 0.01001)) // round(9.99999) = 10
	})
	t.Run("it rounds halves up", func(t *testing.T) {
		require.Equal(t, int64(20), report.Percentile([]int64{10, 20, 30}, 0.25))     // 0.5 -> 1
		require.Equal(t, int64(3), report.Percentile([]int64{1, 2, 3, 4, 5}, 0.375))  // 1.5 -> 2
		require.Equal(t, int64(1), report.Percentile([]int64{1, 2, 3, 4, 5}, 0.1249)) // 0.4996 -> 0
	})
	t.Run("it clamps p outside [0, 1] and handles tiny inputs", func(t *testing.T) {
		require.Equal(t, int64(30), report.Percentile([]int64{10, 20, 30}, 1.5))
		require.Equal(t, int64(10), report.Percentile([]int64{10, 20, 30}, -0.5))
		require.Equal(t, int64(7), report.Percentile([]int64{7}, 0.999))
		require.Equal(t, int64(0), report.Percentile([]int64(nil), 0.99))
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
			require.True(t, r.TryPush(newEvent(uint64(i))))
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

func TestEvent(t *testing.T) {
	require.EqualValues(t, 32, unsafe.Sizeof(Event{}))
	ev := newEvent(eventID(3, 7))
	require.Equal(t, uint64(3)<<40|7, ev.Timestamp)
	require.NotEqual(t, newEvent(eventID(3, 8)), ev)
}
