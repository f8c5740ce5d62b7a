package ringtest

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/ring"
)

// check is one property of the suite: a function that exercises rings from a
// factory and returns an error that describes the first violation it saw.
// Keeping the checks free of *testing.T lets the kit's own tests prove that
// each one fails on a ring that breaks its property.
type check[T any] struct {
	name string
	run  func(f ring.Factory[T], short bool) error
}

// checks are the properties Run checks, in order.
var checks = []check[int]{
	{"pushes, pops, Len and Cap follow a sequential FIFO model", checkModel},
	{"the ring holds exactly its capacity, lap after lap", checkExactCapacity},
	{"Len stays between 0 and Cap while producers and consumers run", checkLenBounds},
	{"many producers and consumers each get every value once in producer order", checkManyProducersConsumers},
	{"full and empty churn on rings of capacity 1 and 2 loses nothing", checkChurn},
	{"concurrent pushes into a ring with room and pops from a full ring never fail", checkFillDrain},
	{"TryPush and TryPop never fail while the ring has room or holds values", checkTokens},
	{"small concurrent histories are linearizable", checkLinearizable},
}

// releaseChecks are the properties RunReleases checks.
var releaseChecks = []check[payload]{
	{"popped values are released to the garbage collector", ignoreShort(checkPoppedReleased)},
	{"a value that a full ring refused stays with the caller", ignoreShort(checkRejectedReleased)},
}

func ignoreShort[T any](run func(ring.Factory[T]) error) func(ring.Factory[T], bool) error {
	return func(f ring.Factory[T], _ bool) error { return run(f) }
}

// Run runs the conformance suite against the rings that f creates, one
// subtest per property; see the package documentation for the list. f must
// return a new, empty ring on every call. With -short the concurrent checks
// run fewer operations.
func Run(t *testing.T, f ring.Factory[int]) {
	t.Helper()
	runChecks(t, f, checks)
}

// RunReleases checks that the rings that f creates keep no reference to the
// values they have handed back: popped values, and values that TryPush
// refused, must be freed by the garbage collector once the caller drops
// them. It needs pointer values to watch, hence a factory for *[64]byte
// rather than the int factory that [Run] takes.
func RunReleases(t *testing.T, f ring.Factory[*[64]byte]) {
	t.Helper()
	runChecks(t, f, releaseChecks)
}

func runChecks[T any](t *testing.T, f ring.Factory[T], list []check[T]) {
	t.Helper()
	for _, c := range list {
		t.Run(c.name, func(t *testing.T) {
			// A check whose own retry loops are bounded by stallLimit can
			// still hang inside a TryPush or TryPop that never returns. Then
			// nothing but ending the process helps; say which check and
			// where every goroutine is, rather than wait for go test's
			// ten-minute timeout.
			watchdog := time.AfterFunc(hangLimit, func() {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				panic(fmt.Sprintf("ringtest: %s has not returned after %v; a TryPush, TryPop or Len call "+
					"is probably looping forever.\n\n%s", t.Name(), hangLimit, buf))
			})
			defer watchdog.Stop()
			require.NoError(t, c.run(f, testing.Short()))
		})
	}
}

// hangLimit is how long one check may run before the kit ends the process.
const hangLimit = 3 * time.Minute
