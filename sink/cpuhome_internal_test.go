package sink

import (
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
		want map[int]uint16 // CPU -> shard
		size int
	}{
		{"two CPUs, two rings", []int{0, 1}, 2, map[int]uint16{0: 0, 1: 1}, 2},
		{"every other CPU", []int{0, 2, 4, 6}, 4, map[int]uint16{0: 0, 2: 1, 4: 2, 6: 3}, 8},
		{"a cpuset high up", []int{33, 34, 35}, 3, map[int]uint16{33: 0, 34: 1, 35: 2}, 64},
		{"more CPUs than rings", []int{0, 1, 2, 3, 4, 5}, 2, map[int]uint16{0: 0, 1: 1, 2: 0, 3: 1, 4: 0, 5: 1}, 8},
		{"one ring", []int{5, 9}, 1, map[int]uint16{5: 0, 9: 0}, 16},
		{"no CPUs known", nil, 4, map[int]uint16{0: 0}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := cpuHomeTable(tc.cpus, tc.n)
			require.Len(t, table, tc.size)
			for cpu, shard := range tc.want {
				require.Equal(t, shard, table[cpu], "CPU %d", cpu)
			}
			for i, shard := range table {
				require.Less(t, int(shard), tc.n, "entry %d", i)
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
	per := map[uint16]int{}
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
