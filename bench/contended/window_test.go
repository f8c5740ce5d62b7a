package main

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestClaimHandsOutTheBudgetOnceInChunks(t *testing.T) {
	r := newRound()
	r.limit, r.length = 5*chunk+100, time.Hour
	var got [][2]int64
	for {
		lo, hi, ok := r.claim()
		if !ok {
			break
		}
		got = append(got, [2]int64{lo, hi})
	}
	want := [][2]int64{{0, chunk}, {chunk, 2 * chunk}, {2 * chunk, 3 * chunk}, {3 * chunk, 4 * chunk}, {4 * chunk, 5 * chunk}, {5 * chunk, 5*chunk + 100}}
	require.Equal(t, want, got, "consecutive chunks, the last one cut at the limit")
	_, _, ok := r.claim()
	require.False(t, ok, "a spent budget stays spent")
}

func TestTheDeadlineCountsFromTheFirstClaim(t *testing.T) {
	r := newRound()
	r.limit, r.length = unlimited, 20*time.Millisecond
	time.Sleep(30 * time.Millisecond) // longer than the round: a deadline set at release would have passed
	start := time.Now()
	_, _, ok := r.claim()
	require.True(t, ok, "the first claim starts the round")
	for ok {
		_, _, ok = r.claim()
	}
	took := time.Since(start)
	require.GreaterOrEqual(t, took, 20*time.Millisecond)
	require.Less(t, took, 2*time.Second)
}

func TestARoundPushesExactlyItsBudget(t *testing.T) {
	var pushes atomic.Int64
	seen := sync.Map{}
	push := func(v uint64) bool {
		pushes.Add(1)
		_, dup := seen.LoadOrStore(v, true)
		require.False(t, dup, "value %x pushed twice", v)
		return true
	}
	c := mustCrew(t, []func(uint64) bool{push, push, push, push})
	defer c.finish()
	const limit = 7*chunk + 3
	c.play(limit, time.Hour, true, nil)
	rr := c.result()
	require.NoError(t, rr.err)
	require.EqualValues(t, limit, pushes.Load(), "every position of the budget was pushed once")
	require.EqualValues(t, limit, rr.attempted)
	require.EqualValues(t, limit, rr.accepted)
	require.Positive(t, rr.wall)

	pushes.Store(0)
	c.play(2*chunk, time.Hour, true, nil)
	require.EqualValues(t, 2*chunk, pushes.Load(), "the next round has a budget of its own")
	require.EqualValues(t, 2*chunk, c.result().attempted)
}

func TestARoundWithoutBudgetEndsAtItsDeadline(t *testing.T) {
	push := func(uint64) bool { return false } // a full sink rejects everything
	c := mustCrew(t, []func(uint64) bool{push, push})
	defer c.finish()
	start := time.Now()
	c.play(unlimited, 10*time.Millisecond, true, nil)
	rr := c.result()
	require.GreaterOrEqual(t, time.Since(start), 10*time.Millisecond)
	require.Positive(t, rr.attempted)
	require.Zero(t, rr.accepted)
	require.GreaterOrEqual(t, rr.wall, 10*time.Millisecond)
}

func TestTheTailRoundTimesEveryPushAtItsPosition(t *testing.T) {
	c := mustCrew(t, []func(uint64) bool{func(uint64) bool { return true }, func(uint64) bool { return true }})
	defer c.finish()
	const limit = 3 * chunk
	lat := make([]int64, limit)
	for i := range lat {
		lat[i] = -1
	}
	r := c.play(limit, time.Hour, true, lat)
	require.EqualValues(t, limit, min(r.claimed.Load(), limit))
	require.False(t, slices.Contains(lat, -1), "every claimed position holds a latency")
}

func TestOverlapMeasuresProducersInsideTheRoundAtOnce(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	p := func(start, end int) *producer[uint64] {
		return &producer[uint64]{pushed: true, start: at(start), end: at(end)}
	}
	t.Run("together all the way", func(t *testing.T) {
		require.Equal(t, 10*time.Millisecond, overlapOf([]*producer[uint64]{p(0, 10), p(0, 10)}, 2))
	})
	t.Run("one after another, as the fixed-count method let fast rows run", func(t *testing.T) {
		require.Equal(t, 5*time.Millisecond, overlapOf([]*producer[uint64]{p(0, 5), p(5, 10)}, 2), "half the processors for the whole wall")
	})
	t.Run("more producers than processors count as full", func(t *testing.T) {
		require.Equal(t, 10*time.Millisecond, overlapOf([]*producer[uint64]{p(0, 10), p(0, 10), p(0, 10), p(2, 8)}, 2))
	})
	t.Run("producers that did not push are not inside", func(t *testing.T) {
		idle := &producer[uint64]{start: at(0), end: at(10)}
		require.Equal(t, 5*time.Millisecond, overlapOf([]*producer[uint64]{p(0, 10), idle}, 2))
	})
}

func TestValidFloor(t *testing.T) {
	require.Zero(t, validFloor(1, 2), "one producer has nothing to overlap with")
	require.InDelta(t, 1.8, validFloor(2, 2), 1e-9)
	require.InDelta(t, 1.8, validFloor(256, 2), 1e-9)
	require.InDelta(t, 3.6, validFloor(4, 16), 1e-9)
	require.InDelta(t, 14.4, validFloor(64, 16), 1e-9)
}

func TestARowWhoseProducersDoNotPushAtOnceIsInvalid(t *testing.T) {
	// Every push takes a lock and sleeps under it: the producers take
	// turns, and the row must say so, whatever the machine.
	var mu sync.Mutex
	im := &impl[uint64]{name: "turns", setup: func(sz sizing, mode consumerMode) (rowSetup[uint64], error) {
		return &queueRow[uint64]{mode: mode,
			push: func(uint64) bool {
				mu.Lock()
				time.Sleep(50 * time.Microsecond)
				mu.Unlock()
				return true
			},
			pop: func() bool { return false }}, nil
	}}
	row, err := measure(im, sizing{producers: 4, shards: 1, window: 20 * time.Millisecond, round: chunk}, held, 1)
	require.NoError(t, err)
	require.False(t, row.Valid, "parallelism %.2f", row.Parallelism)
	require.Less(t, row.Parallelism, 0.5)
	require.InDelta(t, validFloor(4, runtime.GOMAXPROCS(0)), row.ParallelismFloor, 1e-9)
}

func TestAFastRowsProducersOverlap(t *testing.T) {
	// The defect of the fixed-count method: the fastest rows finished each
	// producer's pushes before the next one started. In rounds, producers
	// are inside the round together, however fast the push (overlap), on
	// a loaded machine too.
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs GOMAXPROCS >= 2 for two producers to be inside a round at once")
	}
	var n atomic.Int64
	im := &impl[uint64]{name: "fast", setup: func(sz sizing, mode consumerMode) (rowSetup[uint64], error) {
		return &queueRow[uint64]{mode: mode, push: func(uint64) bool { n.Add(1); return true }, pop: func() bool { return false }}, nil
	}}
	row, err := measure(im, sizing{producers: 4, shards: 1, window: 40 * time.Millisecond, round: 1 << 20}, held, 1)
	require.NoError(t, err)
	require.Greater(t, row.Overlap, 0.5, "producers inside the round at once: %.2f", row.Overlap)
}

// mustCrew starts a crew with the default scheduling policy.
func mustCrew(t *testing.T, pushers []func(uint64) bool) *crew[uint64] {
	t.Helper()
	c, err := startCrew(pushers, false)
	require.NoError(t, err)
	return c
}
