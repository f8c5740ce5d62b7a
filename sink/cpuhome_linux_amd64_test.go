package sink_test

import (
	"runtime"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/machine"
	"github.com/shardedsink/shardedsink/sink"
)

// pinnedPush pushes n values from a new OS thread pinned to cpu and reports
// whether the pin took.
func pinnedPush(t *testing.T, s *sink.Sink[ev], cpu, n int) {
	t.Helper()
	var wg sync.WaitGroup
	var errno syscall.Errno
	wg.Go(func() {
		runtime.LockOSThread() // not unlocked: the pinned thread ends with the goroutine
		var set [1024 / 64]uint64
		set[cpu/64] |= 1 << (cpu % 64)
		_, _, errno = syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(set), uintptr(unsafe.Pointer(&set)))
		if errno != 0 {
			return
		}
		for i := range n {
			s.Push(ev{i})
		}
	})
	wg.Wait()
	require.Zero(t, errno, "pinning a thread to CPU %d", cpu)
}

func TestHandlelessPushUsesTheRingOfItsCPU(t *testing.T) {
	if !machine.CPUReadable() {
		t.Skip("CPU numbers are not readable here: Push uses stack homes")
	}
	cpus := machine.CPUs()
	shards := min(len(cpus), 8)
	s := heldSink(t, shards)
	require.True(t, sink.UsesCPUHomes(s))
	seen := map[int]int{} // shard -> CPU
	for _, cpu := range cpus[:shards] {
		before := s.Stats().PerShard
		pinnedPush(t, s, cpu, 10)
		after := s.Stats().PerShard
		home := sink.CPUHome(s, cpu)
		for i := range after {
			want := 0
			if i == home {
				want = 10
			}
			require.Equal(t, want, after[i].Queued-before[i].Queued, "CPU %d (home %d): shard %d", cpu, home, i)
		}
		if other, dup := seen[home]; dup {
			t.Fatalf("CPUs %d and %d share ring %d with %d shards for %d CPUs", other, cpu, home, shards, len(cpus))
		}
		seen[home] = cpu
	}
}

func TestStackHomesCanBeForcedWhereCPUHomesExist(t *testing.T) {
	sink.UseStackHomes(t)
	s := heldSink(t, 4)
	require.False(t, sink.UsesCPUHomes(s))
	require.Equal(t, -1, sink.CPUHome(s, 0))
}
