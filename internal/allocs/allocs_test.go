package allocs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

var escaped *[64]byte

// oneInAHundred allocates on every hundredth call.
func oneInAHundred() func() {
	n := 0
	return func() {
		if n++; n%100 == 0 {
			escaped = new([64]byte)
		}
	}
}

func TestPerCallSeesOneAllocationInAHundredCalls(t *testing.T) {
	require.Equal(t, 0.01, PerCall(1000, oneInAHundred()))
	require.Zero(t, testing.AllocsPerRun(1000, oneInAHundred()), "AllocsPerRun truncates: why this package exists")
}

func TestOneAllocationInAHundredCallsIsAboveTheNoise(t *testing.T) {
	require.Greater(t, PerCall(10000, oneInAHundred()), Noise)
}

func TestPerCallIsZeroForACallThatDoesNotAllocate(t *testing.T) {
	x := 0
	require.Zero(t, PerCall(1000, func() { x++ }))
}
