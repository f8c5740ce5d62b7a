package sink_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/machine"
	"github.com/shardedsink/shardedsink/sink"
)

// groupSink is a sink with CPU homes and twice as many shards as CPUs (at
// most 64), whose workers each hold one value in Drain, so that its rings
// only fill.
func groupSink(t *testing.T, ringCap int) (*sink.Sink[ev], int) {
	t.Helper()
	if !machine.CPUReadable() {
		t.Skip("CPU numbers are not readable here: Push uses stack homes")
	}
	cpus := len(machine.CPUs())
	if cpus > 32 {
		t.Skipf("%d CPUs: the test wants 2 shards per CPU", cpus)
	}
	shards := 2 * cpus
	g := newGate[ev]()
	s := newSink(t, testCfg(shards, ringCap, 1), g)
	t.Cleanup(g.release)
	for range shards {
		require.True(t, s.Handle().Push(ev{-1}))
	}
	g.waitEntered(t)
	eventually(t, func() bool { return s.Stats().Queued == 0 }, "every worker took its value")
	require.True(t, sink.UsesCPUHomes(s))
	return s, shards
}

// Each CPU of the set owns a group of shards, the groups are disjoint and
// cover every shard.
func TestEveryShardIsInOneCPUsGroup(t *testing.T) {
	s, shards := groupSink(t, 8)
	owners := make([]int, shards)
	for _, cpu := range machine.CPUs() {
		first, size := sink.CPUGroup(s, cpu)
		require.Equal(t, 2, size, "CPU %d", cpu)
		for j := first; j < first+size; j++ {
			owners[j]++
		}
	}
	for j, n := range owners {
		require.Equal(t, 1, n, "shard %d is in %d groups", j, n)
	}
}

// A goroutine pinned to a CPU pushes into that CPU's group only.
func TestAPinnedPushStaysInItsCPUsGroup(t *testing.T) {
	s, _ := groupSink(t, 1024)
	for _, cpu := range machine.CPUs() {
		before := s.Stats().PerShard
		pinnedPush(t, s, cpu, 10)
		after := s.Stats().PerShard
		first, size := sink.CPUGroup(s, cpu)
		got := 0
		for i := range after {
			d := after[i].Queued - before[i].Queued
			if i < first || i >= first+size {
				require.Zero(t, d, "CPU %d (group %d+%d): shard %d", cpu, first, size, i)
			}
			got += d
		}
		require.Equal(t, 10, got)
	}
}

// The burst of issue 36: 64 producers push 7/8 of the sink's capacity
// (Shards x RingCapacity) at once into a stalled sink with twice as many
// shards as CPUs. With a ring per CPU as home, only one ring per CPU took
// the burst (64 of 256 slots); with groups, every ring does, and nothing
// is dropped.
func TestABurstOfSevenEighthsFitsWithMoreShardsThanCPUs(t *testing.T) {
	const ringCap, producers = 32, 64
	s, shards := groupSink(t, ringCap)
	total := 7 * shards * ringCap / 8
	var start sync.WaitGroup
	start.Add(1)
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused := 0
	for p := range producers {
		n := total / producers
		if p < total%producers {
			n++
		}
		wg.Go(func() {
			start.Wait()
			for i := range n {
				if !s.Push(ev{p*1000 + i}) {
					mu.Lock()
					refused++
					mu.Unlock()
				}
			}
		})
	}
	start.Done()
	wg.Wait()
	st := s.Stats()
	require.Zero(t, refused)
	require.Zero(t, st.Dropped)
	require.Equal(t, total, st.Queued)
	// The homes themselves spread (not only the retries): the CPU that ran
	// most of the producers had a home in every ring of its group.
	spread := false
	for _, cpu := range machine.CPUs() {
		first, size := sink.CPUGroup(s, cpu)
		all := true
		for j := first; j < first+size; j++ {
			all = all && st.PerShard[j].Queued > 0
		}
		spread = spread || all
	}
	require.True(t, spread, "no CPU's group had every ring in use: %+v", st.PerShard)
}
