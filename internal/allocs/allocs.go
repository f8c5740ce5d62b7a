// Package allocs counts allocations exactly, for the tests of the library's
// promises of zero allocations. testing.AllocsPerRun returns its mean per
// run truncated to an integer, so a call that allocates 0.99 times on
// average passes require.Zero; PerCall divides the exact count, so over
// 1,000 calls a single allocation shows.
package allocs

import "runtime"

// Noise is the rate per call below which PerCall's count stands for zero
// where other goroutines run meanwhile: the runtime allocates for them now
// and then (a goroutine that parks after a garbage collection emptied the
// runtime's cache of wait records gets a new one; a sink's workers park
// often), a few allocations in 10,000 calls. A call that allocates in one
// call of a hundred, 0.01, stays ten times above it.
const Noise = 0.001

// PerCall returns the mean number of heap allocations per call of f over
// calls calls, after one call to warm up (f runs calls+1 times, as under
// testing.AllocsPerRun). Like AllocsPerRun, it sets GOMAXPROCS to 1 while
// it measures, and counts every allocation of the process meanwhile.
func PerCall(calls int, f func()) float64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range calls {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(calls)
}
