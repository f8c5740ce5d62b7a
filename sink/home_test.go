package sink_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// pushFrom pushes n values from a new goroutine and waits for it.
func pushFrom(s interface{ Push(ev) bool }, n int) {
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			s.Push(ev{i})
		}
	})
	wg.Wait()
}

func TestHandlelessPushKeepsAGoroutineOnOneShard(t *testing.T) {
	g := newGate[ev]()
	const shards = 8
	s := newSink(t, testCfg(shards, 1024, 1), g)
	t.Cleanup(g.release)
	for range shards {
		require.True(t, s.Handle().Push(ev{-1}))
	}
	g.waitEntered(t)
	eventually(t, func() bool { return s.Stats().Queued == 0 }, "every worker took its value")

	for round := range 20 {
		before := s.Stats().PerShard
		pushFrom(s, 10)
		after := s.Stats().PerShard
		changed := 0
		for i := range after {
			if d := after[i].Queued - before[i].Queued; d != 0 {
				require.Equal(t, 10, d, "round %d: shard %d got part of one goroutine's pushes", round, i)
				changed++
			}
		}
		require.Equal(t, 1, changed, "round %d: one goroutine's pushes went to %d shards", round, changed)
	}
}

func TestHandlelessPushSpreadsGoroutinesOverShards(t *testing.T) {
	g := newGate[ev]()
	const shards, goroutines = 8, 64
	s := newSink(t, testCfg(shards, 1024, 1), g)
	t.Cleanup(g.release)
	for range shards {
		require.True(t, s.Handle().Push(ev{-1}))
	}
	g.waitEntered(t)
	eventually(t, func() bool { return s.Stats().Queued == 0 }, "every worker took its value")

	// 64 goroutines alive at once, so that their stacks are distinct.
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range goroutines {
		wg.Go(func() {
			<-start
			require.True(t, s.Push(ev{1}))
		})
	}
	close(start)
	wg.Wait()
	used, most := 0, 0
	for _, ps := range s.Stats().PerShard {
		if ps.Queued > 0 {
			used++
		}
		most = max(most, ps.Queued)
	}
	// Uniform homes put 8 on each shard; 64 balls in 8 bins leave a bin
	// empty with probability about 8*(7/8)^64 = 0.0016 and put more than
	// 24 in one with a far smaller one.
	require.GreaterOrEqual(t, used, 7, "goroutines landed on %d of %d shards", used, shards)
	require.LessOrEqual(t, most, 24, "one shard got %d of %d goroutines", most, goroutines)
}
