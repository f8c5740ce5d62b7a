package mpmc

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
)

// A debugging aid for ends that are never released: with MPMCDEBUG=leaks in
// the environment when the program starts, every Sender and Receiver that
// the garbage collector frees without a Release is reported on standard
// error (through runtime.AddCleanup). Such an end keeps its channel open for
// ever: receivers wait for a close that never comes. Off, it costs a Clone
// or a constructor one load of a bool, and an end one nil pointer.
var leakCheck = os.Getenv("MPMCDEBUG") == "leaks"

// reportLeak tells of an end that was freed without a Release.
var reportLeak = func(end string) {
	fmt.Fprintf(os.Stderr, "mpmc: a %s was garbage-collected without Release: its channel stays open until every %s is released (MPMCDEBUG=leaks)\n", end, end)
}

// trackLeak returns the flag that the Release of the end at ptr sets, and
// registers a cleanup that reports the end if it is freed with the flag
// unset; nil when leak reports are off. The flag is allocated on its own, so
// that the cleanup does not keep the end reachable.
func trackLeak[E any](ptr *E, end string) *uint32 {
	if !leakCheck {
		return nil
	}
	released := new(uint32)
	runtime.AddCleanup(ptr, func(released *uint32) {
		if atomic.LoadUint32(released) == 0 {
			reportLeak(end)
		}
	}, released)
	return released
}
