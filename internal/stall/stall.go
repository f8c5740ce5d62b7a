// Package stall measures, for tests, how long an operation waits for a
// goroutine that has claimed a step the operation needs and is not running:
// the preempted slot owner of a lock-free ring. It runs the operation at
// GOMAXPROCS=1 with the owner runnable but not running, so the owner can
// finish only once the waiting goroutine gives up the processor: at once if
// its wait yields (runtime.Gosched), and otherwise only when the scheduler
// preempts it, which it does to a goroutine that has run for 10 ms.
//
// That bound is structural, not a timing accident, so the measurement is
// robust to a loaded machine: load can only make a yielding wait slower,
// and each trial starts on a fresh time slice, so a wait that never yields
// takes 10 ms or more in every trial. Medians over a few trials leave out
// the odd trial that the host delayed.
package stall

import (
	"runtime"
	"runtime/debug"
	"slices"
	"time"
)

// PreemptSlice is the time slice after which the Go scheduler preempts a
// goroutine that does not yield (sysmon's forcePreemptNS): a wait that
// never yields lasts at least this long in every trial.
const PreemptSlice = 10 * time.Millisecond

// Times runs trials of one scenario at GOMAXPROCS=1 and returns the wall
// time of each operation, in increasing order. For each trial, claim sets
// the scenario up (a step claimed by an owner that has not finished it) and
// returns op, the operation that must wait for the owner, and finish, the
// rest of the owner's step. finish runs on a new goroutine that is runnable
// while op runs: it can run only when op's goroutine gives up the
// processor. The garbage collector is off during the trials (a collection
// stops the world and would let the owner run).
func Times(trials int, claim func() (op, finish func())) []time.Duration {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	times := make([]time.Duration, 0, trials)
	for range trials {
		op, finish := claim()
		done := make(chan struct{})
		// Start on a fresh time slice: the scheduler preempts a goroutine
		// only after it has run for PreemptSlice since it was scheduled.
		runtime.Gosched()
		go func() {
			defer close(done)
			finish()
		}()
		start := time.Now()
		op()
		times = append(times, time.Since(start))
		<-done
	}
	slices.Sort(times)
	return times
}

// Median returns the middle of times, which Times sorted.
func Median(times []time.Duration) time.Duration { return times[len(times)/2] }
