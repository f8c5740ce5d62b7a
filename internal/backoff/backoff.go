// Package backoff is crossbeam's Backoff for the lock-free loops of the ring
// and the channel: spin a growing number of times after a lost race, and
// yield the processor when waiting for another goroutine to finish a step it
// has started. A Backoff lives on the caller's stack; its zero value is ready
// to use.
package backoff

import "runtime"

const (
	spinLimit  = 6  // spin up to 2^6 iterations
	yieldLimit = 10 // after that, Snooze yields instead of spinning
)

// Backoff counts the steps taken in one wait.
type Backoff struct{ step uint32 }

// Spin waits briefly after a lost compare-and-swap: 2^step iterations of an
// empty call, up to 2^6.
func (b *Backoff) Spin() {
	for i := 0; i < 1<<min(b.step, spinLimit); i++ {
		spinHint()
	}
	if b.step <= spinLimit {
		b.step++
	}
}

// Snooze waits for another goroutine to finish a step it has started (a
// slot claimed and not yet published). It spins at first, then yields with
// runtime.Gosched so that a preempted goroutine can finish: on two cores it
// may well be waiting for this very P.
func (b *Backoff) Snooze() {
	if b.step <= spinLimit {
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
