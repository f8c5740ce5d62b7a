// Package cpuload tells whether the process's goroutines hold every
// processor. The sink's hand-off reads it behind a destination that is
// slow (sink/handoff.go): there a full ring may still be a matter of CPU,
// when what the destination waits for (a reader of a pipe, in this
// process or on this machine) runs behind the producers, and a short park
// gives it the CPU.
//
// Short is read on the hand-off's slow path only (a push that found its
// ring full behind a slow destination), never on a successful push. It
// measures the process's CPU time (getrusage) over windows of at least
// Window: a window in which the process used at least 7/8 of GOMAXPROCS
// processors is short. Between two readings it returns the last verdict,
// one atomic load; a reading (a system call, by the one caller that takes
// the lock; the others keep the last verdict) costs about a microsecond,
// at most once a Window. It cannot see other processes: on a machine
// loaded by others it reads the process's share as spare CPU, and says
// not short.
package cpuload

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Window is the shortest span over which Short measures the process's
// CPU time.
const Window = time.Millisecond

// staleAfter is the age past which the window begun at the last reading
// says nothing about now: Short then starts a new one and keeps the last
// verdict until it ends.
const staleAfter = 20 * Window

// gauge is the process's one: the CPU is the process's, whatever asks.
var gauge struct {
	mu sync.Mutex // held by the one caller that reads the clocks
	// at is when the window in progress began (time since epoch); a plain
	// int64 used through sync/atomic, written under mu.
	at int64
	// cpu is the process's CPU time at at. Guarded by mu.
	cpu time.Duration
	// short is the verdict of the last window: 1 short, 0 not.
	short atomic.Int32
	// forced, when not 0, is a test's verdict (Force): 1 short, 2 not.
	forced atomic.Int32
}

var epoch = time.Now()

// Short reports whether, over the last window of at least Window, the
// process's goroutines held at least 7/8 of GOMAXPROCS processors. Where
// the platform cannot read the process's CPU time it reports false.
func Short() bool {
	switch gauge.forced.Load() {
	case 1:
		return true
	case 2:
		return false
	}
	now := int64(time.Since(epoch))
	if now-atomic.LoadInt64(&gauge.at) < int64(Window) || !gauge.mu.TryLock() {
		return gauge.short.Load() != 0
	}
	defer gauge.mu.Unlock()
	at := gauge.at
	if now-at < int64(Window) {
		return gauge.short.Load() != 0
	}
	cpu, ok := processCPU()
	if !ok {
		return false
	}
	if at != 0 && now-at < int64(staleAfter) {
		var v int32
		if int64(cpu-gauge.cpu)*8 >= (now-at)*7*int64(runtime.GOMAXPROCS(0)) {
			v = 1
		}
		gauge.short.Store(v)
	}
	gauge.cpu = cpu
	atomic.StoreInt64(&gauge.at, now)
	return gauge.short.Load() != 0
}

// Force makes Short report short (or not) until cleanup runs what it is
// given (a test's t.Cleanup): for tests that simulate either side (a
// testing/synctest bubble, whose clock is not the process's). Tests that
// force it must not run in parallel.
func Force(cleanup func(func()), short bool) {
	v := int32(2)
	if short {
		v = 1
	}
	prev := gauge.forced.Swap(v)
	cleanup(func() { gauge.forced.Store(prev) })
}
