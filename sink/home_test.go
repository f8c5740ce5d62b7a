package sink_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/sink"
)

// growStack makes the calling goroutine's stack grow (and move) now, before
// the pushes that follow: a goroutine's home follows its stack, and under
// the race detector the first Push alone can outgrow a fresh 2 KiB stack.
//
//go:noinline
func growStack() byte {
	var pad [64 << 10]byte
	for i := range pad {
		pad[i] = byte(i)
	}
	return pad[len(pad)-1]
}

// pushFrom pushes n values from a new goroutine and waits for it.
func pushFrom(s interface{ Push(ev) bool }, n int) {
	var wg sync.WaitGroup
	wg.Go(func() {
		growStack()
		for i := range n {
			s.Push(ev{i})
		}
	})
	wg.Wait()
}

// heldSink returns a sink whose workers each wait in Drain with one value,
// so that its rings only fill and Stats shows where each push landed.
func heldSink(t *testing.T, shards int) *sink.Sink[ev] {
	g := newGate[ev]()
	s := newSink(t, testCfg(shards, 1024, 1), g)
	t.Cleanup(g.release)
	for range shards {
		require.True(t, s.Handle().Push(ev{-1}))
	}
	g.waitEntered(t)
	eventually(t, func() bool { return s.Stats().Queued == 0 }, "every worker took its value")
	return s
}

func TestHandlelessPushKeepsAGoroutineOnOneShard(t *testing.T) {
	sink.UseStackHomes(t)
	const shards = 8
	s := heldSink(t, shards)

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
	sink.UseStackHomes(t)
	const shards, goroutines = 8, 64
	s := heldSink(t, shards)

	// 64 goroutines alive at once, until every one has pushed, so that
	// their stacks are distinct: a goroutine that exits frees its stack,
	// and the next one started on that P may get the same memory (and so
	// the same home).
	var wg, pushed sync.WaitGroup
	start, exit := make(chan struct{}), make(chan struct{})
	pushed.Add(goroutines)
	for range goroutines {
		wg.Go(func() {
			growStack()
			<-start
			ok := s.Push(ev{1})
			pushed.Done()
			<-exit
			require.True(t, ok)
		})
	}
	close(start)
	pushed.Wait()
	close(exit)
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
