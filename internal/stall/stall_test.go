package stall

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// Times starts a goroutine per trial and joins it before it returns.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The instrument itself, both ways in one run: a wait that spins without
// yielding lasts a preemption slice, one that yields does not.
func TestAWaitThatNeverYieldsLastsAPreemptionSlice(t *testing.T) {
	var flag atomic.Bool
	scenario := func(wait func()) func() (func(), func()) {
		return func() (func(), func()) {
			flag.Store(false)
			return wait, func() { flag.Store(true) }
		}
	}
	spins := Times(3, scenario(func() {
		for !flag.Load() {
		}
	}))
	yields := Times(9, scenario(func() {
		for !flag.Load() {
			runtime.Gosched()
		}
	}))
	t.Logf("spinning: %v; yielding: %v", spins, yields)
	require.GreaterOrEqual(t, spins[0], PreemptSlice, "a spinning wait ended before the scheduler preempted it")
	require.Less(t, Median(yields), time.Millisecond, "a yielding wait lasted long")
}
