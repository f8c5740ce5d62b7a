package sink

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/machine"
)

func TestCPUHomeTableGivesEachCPUOfTheSetItsOwnRing(t *testing.T) {
	for _, tc := range []struct {
		name string
		cpus []int
		n    int
		want map[int]uint32 // CPU -> home entry (the shard, for a group of one)
		size int
	}{
		{"two CPUs, two rings", []int{0, 1}, 2, map[int]uint32{0: 0, 1: 1}, 2},
		{"every other CPU", []int{0, 2, 4, 6}, 4, map[int]uint32{0: 0, 2: 1, 4: 2, 6: 3}, 8},
		{"a cpuset high up", []int{33, 34, 35}, 3, map[int]uint32{33: 0, 34: 1, 35: 2}, 64},
		{"more CPUs than rings", []int{0, 1, 2, 3, 4, 5}, 2, map[int]uint32{0: 0, 1: 1, 2: 0, 3: 1, 4: 0, 5: 1}, 8},
		{"one ring", []int{5, 9}, 1, map[int]uint32{5: 0, 9: 0}, 16},
		{"no CPUs known: one group of every shard", nil, 4, map[int]uint32{0: homeEntry(0, 4)}, 1},
		// More shards than CPUs: each CPU owns a group.
		{"four shards on two CPUs", []int{0, 1}, 4, map[int]uint32{0: homeEntry(0, 2), 1: homeEntry(2, 2)}, 2},
		{"eight shards on two CPUs", []int{0, 1}, 8, map[int]uint32{0: homeEntry(0, 4), 1: homeEntry(4, 4)}, 2},
		{"five shards on two CPUs", []int{3, 6}, 5, map[int]uint32{3: homeEntry(0, 2), 6: homeEntry(2, 3), 0: homeEntry(0, 2), 1: homeEntry(2, 3)}, 8},
		{"a group of one where shards divide unevenly", []int{0, 1, 2}, 4, map[int]uint32{0: 0, 1: 1, 2: homeEntry(2, 2)}, 4},
		// machine.CPU reads CPU c as c mod 4096 (RDPID's 12 bits): CPUs
		// numbered 4,096 and above take the entries of what they read.
		{"CPUs numbered 4,096 and above", []int{4096, 4097, 4098, 4099}, 4, map[int]uint32{0: 0, 1: 1, 2: 2, 3: 3}, 4},
		{"a cpuset across 4,096", []int{4094, 4095, 4096, 4097}, 4, map[int]uint32{0: 0, 1: 1, 4094: 2, 4095: 3}, 4096},
		{"two CPUs that read alike", []int{7, 4103}, 2, map[int]uint32{7: homeEntry(0, 2)}, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := cpuHomeTable(tc.cpus, tc.n)
			require.Len(t, table, tc.size)
			for cpu, shard := range tc.want {
				require.Equal(t, shard, table[cpu], "CPU %d", cpu)
			}
			covered := make([]int, tc.n)
			for i, e := range table {
				first, size := int(e&firstMask), max(int(e>>groupShift), 1)
				require.Less(t, first+size-1, tc.n, "entry %d", i)
				if e <= firstMask {
					require.Zero(t, e>>groupShift, "entry %d: a group of one is the shard itself", i)
				}
				for j := first; j < first+size; j++ {
					covered[j]++
				}
			}
			if len(tc.cpus) > 0 && tc.n > len(tc.cpus) {
				// Every shard is in the group of exactly one CPU of the set.
				owners := make([]int, tc.n)
				read := map[int]bool{}
				for _, c := range tc.cpus {
					read[c%maxCPUHomeTable] = true
				}
				for c := range read {
					e := table[c]
					first, size := int(e&firstMask), max(int(e>>groupShift), 1)
					for j := first; j < first+size; j++ {
						owners[j]++
					}
				}
				for j, o := range owners {
					require.Equal(t, 1, o, "shard %d is in %d CPUs' groups", j, o)
				}
			}
		})
	}
}

func TestCPUHomeTableSpreadsALargeSetEvenly(t *testing.T) {
	var cpus []int
	for c := 64; c < 128; c++ { // 64 CPUs numbered above a 32-ring table's range
		cpus = append(cpus, c)
	}
	table := cpuHomeTable(cpus, 32)
	per := map[uint32]int{}
	for _, c := range cpus {
		per[table[c]]++
	}
	require.Len(t, per, 32, "every ring is some CPU's home")
	for shard, n := range per {
		require.Equal(t, 2, n, "ring %d is the home of %d CPUs", shard, n)
	}
}

func TestDefaultShardsFollowsTheHomes(t *testing.T) {
	for _, tc := range []struct {
		cpuHomes    bool
		cpus, procs int
		want        int
	}{
		{true, 2, 2, 2},    // a ring per CPU
		{true, 64, 64, 64}, // ...up to 64
		{true, 128, 128, 64},
		{true, 64, 2, 8},    // a CPU quota on a large host: 4 per P
		{true, 0, 2, 1},     // no CPU set read
		{false, 2, 2, 8},    // stack homes: 4 per P...
		{false, 64, 64, 32}, // ...up to 32
		{false, 2, 0, 1},
	} {
		require.Equal(t, tc.want, defaultShards(tc.cpuHomes, tc.cpus, tc.procs), "%+v", tc)
	}
	if homesFromCPU() {
		require.Equal(t, defaultShards(true, len(machine.CPUs()), runtime.GOMAXPROCS(0)), DefaultShards())
	}
	useStackHomes(t)
	require.Equal(t, defaultShards(false, 0, runtime.GOMAXPROCS(0)), DefaultShards())
}

// The CPU-home path up to the instruction, on any machine: with CPU homes
// switched on over a CPU set of the test's own, DefaultShards and New count
// that set, and New's table gives each CPU of it a ring of its own. Nothing
// here pushes, so no RDPID runs, and machines without it (AMD VMs,
// other platforms) test the table logic too.
func TestCPUHomesFollowTheCPUSetWithoutReadingTheCPU(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, tc := range []struct {
		name string
		cpus []int
	}{
		{"CPUs 0 to 5", []int{0, 1, 2, 3, 4, 5}},
		{"a cpuset high up", []int{40, 41, 42}},
		{"CPUs numbered 4,096 and above", []int{4096, 4097, 4098, 4099, 4100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			useCPUHomes(t, tc.cpus)
			want := defaultShards(true, len(tc.cpus), 2)
			require.Equal(t, min(len(tc.cpus), 8), want, "a ring per CPU, up to 4 per P")
			require.Equal(t, want, DefaultShards())
			s, err := New(Config[int]{}, ActionFunc[int](func(context.Context, []int) {}))
			require.NoError(t, err)
			defer func() { require.NoError(t, s.Shutdown(context.Background())) }()
			require.Len(t, s.shards, want)
			require.NotNil(t, s.cpuHomes)
			homes := map[int]int{} // shard -> CPU
			for _, c := range tc.cpus[:want] {
				home := int(s.cpuEntry(uint32(c % maxCPUHomeTable))) // what machine.CPU reads on CPU c: a group of one
				if other, dup := homes[home]; dup {
					t.Fatalf("CPUs %d and %d share ring %d", other, c, home)
				}
				homes[home] = c
			}
		})
	}
}

// useCPUHomes makes the sinks built until the test ends take Push's home
// from the CPU, over the CPU set cpus. Such a sink must not Push where
// machine.CPUReadable is false: the instruction may be missing.
func useCPUHomes(t testing.TB, cpus []int) {
	oldHomes, oldCPUs := homesFromCPU, homeCPUs
	homesFromCPU = func() bool { return true }
	homeCPUs = func() []int { return cpus }
	t.Cleanup(func() { homesFromCPU, homeCPUs = oldHomes, oldCPUs })
}

// useStackHomes makes the sinks built until the test ends take Push's home
// from the goroutine's stack, as on a platform without a cheap CPU number.
func useStackHomes(t testing.TB) {
	old := homesFromCPU
	homesFromCPU = func() bool { return false }
	t.Cleanup(func() { homesFromCPU = old })
}

// TestShardsDocStatesTheDefaultsMemory recomputes the memory table in
// Config.Shards' doc comment from the defaults.
func TestShardsDocStatesTheDefaultsMemory(t *testing.T) {
	src, err := os.ReadFile("config.go")
	require.NoError(t, err)
	human := func(b int) string {
		if b >= 1<<20 {
			return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
		}
		return fmt.Sprintf("%d KiB", b>>10)
	}
	for _, p := range []int{2, 8, 64} {
		for _, homes := range []string{"CPU", "stack"} {
			n := defaultShards(homes == "CPU", p, p) // as many CPUs as GOMAXPROCS
			fields := []string{fmt.Sprint(p), homes, fmt.Sprint(n)}
			for _, size := range []int{8, 32, 64} {
				fields = append(fields, human(n*(DefaultRingCapacity*(8+size)+DefaultBatchSize*size)))
			}
			row := `//\t` + strings.Join(fields, `\s+`) + `\n`
			require.Regexp(t, regexp.MustCompile(row), string(src), "Config.Shards' memory table lacks the row %q", fields)
		}
	}
}
