// Package backoff is crossbeam's Backoff for the lock-free loops of the ring
// and the channel: spin a growing number of times after a lost race, and
// yield the processor when waiting for another goroutine to finish a step it
// has started. A Backoff lives on the caller's stack; its zero value is ready
// to use.
package backoff

import "runtime"

const (
	spinLimit = 6 // Spin: up to 2^6 iterations
	// snoozeSpins is how many steps Snooze spins before it yields: 2^0,
	// 2^1 and 2^2 iterations, 7 in all, each step after a fresh look at
	// the slot. A running owner publishes within that; past it, the owner
	// is most likely off its processor, and spinning only delays the
	// Gosched that lets it back on. Measured (bash
	// bench/channels/snooze.sh; BenchmarkSnoozeUntilItYields): counts of
	// 0 to 4 ran the goroutine crews of the channel table no slower than
	// 7 (the count before, 127 iterations, about 250 ns, where a Gosched
	// costs about 100 ns), and the thread crews alike at every count.
	snoozeSpins = 3
	yieldLimit  = 10 // the step stops growing here
)

// Backoff counts the steps taken in one wait.
type Backoff struct{ step uint32 }

// Spin waits briefly after a lost compare-and-swap: 2^step iterations of an
// empty call, up to 2^6. It never yields: the goroutine that won the race
// has made progress already, and a retry is due at once. A wait for another
// goroutine's step uses Snooze.
func (b *Backoff) Spin() {
	for i := 0; i < 1<<min(b.step, spinLimit); i++ {
		spinHint()
	}
	if b.step <= spinLimit {
		b.step++
	}
}

// Snooze waits for another goroutine to finish a step it has started (a
// slot claimed and not yet published). It spins for the first snoozeSpins
// steps, then yields with runtime.Gosched at every call, so that a
// preempted owner can finish: with more goroutines than processors it may
// well be waiting for this very P, and without the yield the waiter would
// spin until the scheduler preempts it (10 ms or more).
func (b *Backoff) Snooze() {
	if b.step < snoozeSpins {
		for i := 0; i < 1<<b.step; i++ {
			spinHint()
		}
	} else {
		runtime.Gosched()
	}
	if b.step <= yieldLimit {
		b.step++
	}
}

// spinHint is a loop body the compiler keeps; Go has no portable PAUSE.
//
//go:noinline
func spinHint() {}
