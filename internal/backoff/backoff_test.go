package backoff

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/allocs"
)

func TestSpinGrowsUpToItsLimit(t *testing.T) {
	var b Backoff
	for i := range spinLimit + 5 {
		require.Equal(t, uint32(min(i, spinLimit+1)), b.step)
		b.Spin()
	}
	require.Equal(t, uint32(spinLimit+1), b.step)
}

func TestSnoozeGrowsUpToTheYieldLimit(t *testing.T) {
	var b Backoff
	for range yieldLimit + 5 {
		b.Snooze()
	}
	require.Equal(t, uint32(yieldLimit+1), b.step)
}

func TestZeroValueAllocatesNothing(t *testing.T) {
	require.Zero(t, allocs.PerCall(1000, func() {
		var b Backoff
		b.Spin()
		b.Snooze()
	}))
}
