// Package limit holds the once-per-interval turn that the sinks' rare
// reports and the loggers' assist share: one atomic load when it is not
// yet time, a compare-and-swap when it is.
package limit

import (
	"sync/atomic"
	"time"
)

// Every hands out one turn per interval: Turn reports true for the first
// call, and then for the first call at least interval after the last
// turn; of callers that ask at once, one gets it. The zero value is ready
// to use. Times are the caller's clock, in nanoseconds, never 0 after the
// first turn.
type Every struct {
	last atomic.Int64 // the time of the last turn; 0 before the first
}

// Turn reports whether the caller, at now, gets the turn.
func (e *Every) Turn(now int64, interval time.Duration) bool {
	last := e.last.Load()
	if last != 0 && now-last < int64(interval) {
		return false
	}
	return e.last.CompareAndSwap(last, now)
}

// Last returns the time of the last turn, 0 before the first: for tests
// that check a turn was taken.
func (e *Every) Last() int64 { return e.last.Load() }
