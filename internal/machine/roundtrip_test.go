package machine

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// BenchmarkCoreToCoreRoundTrip is the round trip of a cache line between
// two threads that spin on it, each locked to its goroutine: ns/op is one
// round trip, which tells how far apart the VM has placed the process's
// cores now. On the project's 2-core AMD EPYC VMs it reads either about
// 60 ns or 290 to 340 ns, and flips between runs seconds apart; the
// sinks hand each record from a producer's core to the worker's, and
// write fewer records per second in the second state
// (docs/benchmarks.md, "zapsink").
//
//	go test -run '^$' -bench CoreToCore -count 5 ./internal/machine/
func BenchmarkCoreToCoreRoundTrip(b *testing.B) {
	if runtime.GOMAXPROCS(0) < 2 {
		b.Skip("needs GOMAXPROCS >= 2")
	}
	var line atomic.Int64
	n := int64(b.N)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for i := int64(1); i < 2*n; i += 2 {
			for line.Load() != i {
			}
			line.Store(i + 1)
		}
		close(done)
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	for i := int64(0); i < 2*n; i += 2 {
		for line.Load() != i {
		}
		line.Store(i + 1)
	}
	<-done
}
