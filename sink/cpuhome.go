package sink

import (
	"runtime"
	"slices"

	"github.com/shardedsink/shardedsink/internal/machine"
)

// homesFromCPU reports whether sinks built now take the home ring of the
// handle-less Push from the CPU the producer runs on. It is
// machine.CPUReadable (linux/amd64 with RDPID); tests switch it off to run
// the stack-home path on a machine that has CPU homes.
var homesFromCPU = machine.CPUReadable

// homeCPUs returns the CPUs the process may run on, for the home table:
// machine.CPUs; tests give a CPU set of their own.
var homeCPUs = machine.CPUs

// maxCPUHomeTable is the largest CPU number a home table covers, plus one:
// RDPID reads Linux's CPU number from the 12 low bits of IA32_TSC_AUX, so
// machine.CPU reads CPU c as c mod 4096.
const maxCPUHomeTable = 1 << 12

// DefaultShards returns the shard count that Config.Shards = 0 stands for,
// on this machine and at this GOMAXPROCS.
//
// Where Push takes its home from the CPU (linux/amd64 with RDPID; see
// [Sink.Push]), it is one ring per CPU the process may run on, at most
// 4 × GOMAXPROCS and at most 64: two
// producers running at the same instant run on different CPUs, so with a
// ring per CPU they never share a ring. More rings (a Shards set above it)
// do not make pushes cheaper; they add capacity: each CPU then owns a group
// of them, which its goroutines share by their stacks.
// The cap by GOMAXPROCS keeps a process that may run on many CPUs but
// runs few threads at once (a container's CPU quota on a large host) to a
// few rings per running thread.
//
// Elsewhere homes come from the goroutine's stack and are random, so the
// default is 4 × GOMAXPROCS clamped to [1, 32]: a few rings per running thread keep two of them on
// different rings most of the time.
func DefaultShards() int {
	cpuHomes := homesFromCPU()
	cpus := 0
	if cpuHomes {
		cpus = len(homeCPUs())
	}
	return defaultShards(cpuHomes, cpus, runtime.GOMAXPROCS(0))
}

// defaultShards is DefaultShards for a process that may run on cpus CPUs at
// GOMAXPROCS procs, with CPU homes or stack homes.
func defaultShards(cpuHomes bool, cpus, procs int) int {
	perP := defaultShardsPerP * procs
	if cpuHomes {
		return min(max(min(cpus, perP), 1), defaultMaxCPUShards)
	}
	return min(max(perP, 1), defaultMaxShards)
}

// A home entry of the CPU home table: the first shard of the CPU's group in
// its low 16 bits and, when the group has more than one shard, the group's
// size in its high 16 bits (0 otherwise, so that with at most a ring per
// CPU an entry is the shard number itself, as it was before groups).
// MaxShards is below 2^16, so both fit.
const (
	groupShift = 16
	firstMask  = 1<<groupShift - 1
)

// homeEntry returns the entry of a group of size shards from first.
func homeEntry(first, size int) uint32 {
	if size <= 1 {
		return uint32(first)
	}
	return uint32(first) | uint32(size)<<groupShift
}

// cpuHomeTable maps CPU numbers to n shards for the handle-less Push. The
// CPUs the process may run on, in increasing order of the number that
// machine.CPU reads for them (c mod 4096: a CPU numbered 4,096 or above
// reads as its low 12 bits), take the shards in turn, so that they spread
// as evenly as they can whatever their numbers (a cpuset of CPUs 32 to 63,
// or every other CPU, or CPUs 4096 to 4127, spreads as evenly as CPUs 0 to
// 31):
//
//   - with n at most the number of CPUs, CPU k of the set gets shard k mod
//     n, a group of one: up to n of them have a ring each;
//   - with more shards than CPUs, CPU k of c gets the group of shards
//     [k*n/c, (k+1)*n/c) (n/c of them, rounded down or up), and Push spreads
//     its goroutines over the group by their stack homes: two producers
//     running at once run on two CPUs and so push into disjoint groups,
//     and a burst from many goroutines on one CPU fills every ring of its
//     group instead of one.
//
// Two CPUs of the set that read alike (c and c+4096) share an entry: RDPID
// cannot tell them apart. The table's length is the power of two above the
// highest number read, so that a lookup is a mask and a load; a CPU outside
// the set (the affinity was widened after New) lands on the entry its low
// bits choose, which holds the entry of a CPU of the set. With no CPU
// known, every CPU has the group of all n shards.
func cpuHomeTable(cpus []int, n int) []uint32 {
	read := make([]int, 0, len(cpus))
	for _, c := range cpus {
		read = append(read, c%maxCPUHomeTable)
	}
	slices.Sort(read)
	read = slices.Compact(read)
	size := 1
	for _, c := range read {
		for size <= c {
			size <<= 1
		}
	}
	c := len(read)
	entry := func(k int) uint32 {
		switch {
		case c == 0:
			return homeEntry(0, n)
		case n <= c:
			return homeEntry(k%n, 1)
		default:
			first, end := k*n/c, (k+1)*n/c
			return homeEntry(first, end-first)
		}
	}
	t := make([]uint32, size)
	for i := range t {
		t[i] = entry(i % max(c, 1))
	}
	for k, cpu := range read {
		t[cpu] = entry(k)
	}
	return t
}

// cpuEntry returns the home entry of CPU cpu in the sink's CPU home table,
// which must not be empty: a mask (the table's length is a power of two)
// and a load.
func (s *Sink[T]) cpuEntry(cpu uint32) uint32 {
	t := s.cpuHomes
	return t[cpu&uint32(len(t)-1)]
}
