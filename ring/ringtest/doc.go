// Package ringtest is the conformance kit for [ring.Ring] implementations:
// every backend in this module runs it, and so should a ring you write
// yourself.
//
// # Using it
//
// A backend's test file hands the kit its [ring.Factory], once for int values
// (the bulk of the suite) and once for pointer values (the check that popped
// values are released to the garbage collector, which needs pointers to
// watch), and adds a fuzz target:
//
//	func TestConformance(t *testing.T) {
//		ringtest.Run(t, myring.Factory[int])
//	}
//
//	func TestReleases(t *testing.T) {
//		ringtest.RunReleases(t, myring.Factory[*[64]byte])
//	}
//
//	func FuzzRing(f *testing.F) {
//		ringtest.Fuzz(f, myring.Factory[int])
//	}
//
// Two more checks are separate because they are not the ring's behaviour
// under operations: [RunBadCapacity] (a capacity below 1 panics with the
// package name and the value) and [RunNoAllocs] (no allocation per
// operation, which the sink and the channel rely on).
//
// Run it under the race detector (go test -race) and on several cores:
// several checks start goroutines that share one ring, and a data race inside
// the ring is a failure the checks alone may not see. The race detector also
// slows each operation down, which widens the windows in which goroutines
// interleave; on a machine whose cores rarely run at the same instant (a
// small, busy virtual machine), a fault that needs two goroutines inside the
// same few instructions, such as a TryPush that gives up after losing one
// compare-and-swap, is reliably caught only with -race. The suite starts and
// joins all its goroutines before each subtest returns, so a goleak check in
// TestMain stays quiet. go test -fuzz=FuzzRing explores further than the
// seed corpus.
//
// # What it checks
//
// Every subtest is named by the property it checks; together they cover the
// contract in the [ring] package documentation.
//
//   - A sequential FIFO model: random TryPush, TryPop, Len and Cap calls agree
//     with a bounded FIFO queue at every step, driven to full and to empty
//     many times.
//   - Exact capacity for capacities 1, 2, 3, 7, 8 and 100, over several laps
//     and starting offsets: exactly Cap pushes succeed, the next one fails and
//     leaves the ring unchanged, the pops return the values in order, and the
//     next pop fails and returns the zero value.
//   - Len stays within [0, Cap] while producers and consumers run.
//   - Many producers and many consumers on small rings: every value arrives
//     exactly once, and each consumer sees each producer's values in the
//     order that producer pushed them.
//   - Full and empty churn on rings of capacity 1 and 2 loses nothing.
//   - No spurious failure: TryPush never fails while the ring is provably not
//     full and TryPop never fails while it provably holds a value. The proof
//     is part of the test's structure (a pre-filled ring drained by
//     consumers with fixed quotas, and token channels that bound how many
//     values can be in the ring), so a single false is a failure and the
//     check cannot flake on a correct ring.
//   - Linearizability: many small concurrent histories (2 to 4 goroutines, a
//     few operations each) are checked against a bounded FIFO model with
//     github.com/anishathalye/porcupine.
//   - Release: popped values, and values a full ring refused, become
//     unreachable once the caller drops them (checked with [weak.Pointer]).
//
// With -short the suite runs fewer operations and histories; without it, it
// takes a few seconds per backend under -race on two cores.
//
// Each check is proven able to fail: the kit's own tests run it against rings
// broken on purpose (a LIFO stack, a ring that overwrites when full, one that
// holds a value too many, loses or repeats values, misreports Len, gives up
// when it loses a race for its lock, reports empty while its oldest slot is
// being written, keeps popped or refused values reachable, or allocates once
// in a hundred calls) and require the checks that should catch each fault
// to report it; [Run] and [RunNoAllocs] themselves are run on such rings in
// a child test process, which must fail.
//
// A concurrent check that makes no progress (a ring that loses track of a
// value so that a producer or consumer would retry forever) gives up after 30
// seconds and reports the stall rather than hanging the test binary; a check
// stuck inside a TryPush or TryPop that never returns ends the process after
// three minutes with every goroutine's stack.
package ringtest
