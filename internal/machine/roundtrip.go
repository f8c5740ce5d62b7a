package machine

import (
	"runtime"
	"sync/atomic"
	"time"
)

// CoreRoundTrip returns the mean time of one round trip of a cache line
// between two threads over n round trips: each thread is locked to its
// goroutine and spins on the line until the other has written it. It
// tells how far apart the VM has placed the process's cores at the moment
// (on the project's 2-core AMD EPYC VMs either about 60 ns or 290 to 340
// ns, flipping between runs seconds apart; docs/benchmarks.md, "zapsink").
// It keeps two processors busy for the whole measurement, n times the
// result, and returns 0 without measuring when GOMAXPROCS is below 2 or n
// below 1.
func CoreRoundTrip(n int) time.Duration {
	if n < 1 || runtime.GOMAXPROCS(0) < 2 {
		return 0
	}
	var line atomic.Int64
	last := 2 * int64(n)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for i := int64(1); i < last; i += 2 {
			for line.Load() != i {
			}
			line.Store(i + 1)
		}
		close(done)
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	for i := int64(0); i < last; i += 2 {
		for line.Load() != i {
		}
		line.Store(i + 1)
	}
	<-done
	return time.Since(start) / time.Duration(n)
}
