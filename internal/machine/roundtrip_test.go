package machine

import (
	"runtime"
	"testing"
	"time"
)

// BenchmarkCoreToCoreRoundTrip is CoreRoundTrip over b.N round trips:
// ns/op is one round trip. The sinks hand each record from a producer's
// core to the worker's, and on the project's VMs write fewer records per
// second while the round trip reads far (docs/benchmarks.md, "zapsink").
//
//	go test -run '^$' -bench CoreToCore -count 5 ./internal/machine/
func BenchmarkCoreToCoreRoundTrip(b *testing.B) {
	if runtime.GOMAXPROCS(0) < 2 {
		b.Skip("needs GOMAXPROCS >= 2")
	}
	CoreRoundTrip(b.N)
}

// TestCoreRoundTripMeasures checks that CoreRoundTrip returns a time for
// a round trip within reason (a cache line's round trip is tens to
// hundreds of nanoseconds; a spin that a preemption stretched stays
// below a millisecond on average over 10,000), and 0 where it cannot
// measure.
func TestCoreRoundTripMeasures(t *testing.T) {
	if got := CoreRoundTrip(0); got != 0 {
		t.Errorf("CoreRoundTrip(0) = %v, want 0", got)
	}
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs GOMAXPROCS >= 2")
	}
	if got := CoreRoundTrip(10_000); got <= 0 || got >= time.Millisecond {
		t.Errorf("CoreRoundTrip(10000) = %v, want between 0 and 1ms", got)
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	if got := CoreRoundTrip(10); got != 0 {
		t.Errorf("CoreRoundTrip with GOMAXPROCS=1 = %v, want 0", got)
	}
}
