package mutex_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/mutex"
	"github.com/shardedsink/shardedsink/ring/ringtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var _ ring.Factory[int] = mutex.Factory[int]

func TestConformance(t *testing.T) {
	ringtest.Run(t, mutex.Factory[int])
}

func TestReleases(t *testing.T) {
	ringtest.RunReleases(t, mutex.Factory[*[64]byte])
}

func FuzzRing(f *testing.F) {
	ringtest.Fuzz(f, mutex.Factory[int])
}

func TestNewPanicsOnCapacityBelowOne(t *testing.T) {
	require.PanicsWithValue(t, "mutex: capacity must be at least 1, got 0", func() { mutex.New[int](0) })
	require.PanicsWithValue(t, "mutex: capacity must be at least 1, got -1", func() { mutex.New[int](-1) })
	require.PanicsWithValue(t, "mutex: capacity must be at least 1, got -1", func() { mutex.Factory[int](-1) })
}

func TestTryPushAndTryPopDoNotAllocate(t *testing.T) {
	r := mutex.New[int](4)
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		r.TryPush(1)
		r.TryPop()
	}), "a successful TryPush and TryPop")
	require.Zero(t, testing.AllocsPerRun(1000, func() { r.TryPop() }), "TryPop on an empty ring")
	for r.TryPush(1) {
	}
	require.Zero(t, testing.AllocsPerRun(1000, func() { r.TryPush(1) }), "TryPush on a full ring")

	var ri ring.Ring[*[64]byte] = mutex.New[*[64]byte](4)
	p := new([64]byte)
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		ri.TryPush(p)
		ri.TryPop()
	}), "a successful TryPush and TryPop of a pointer through the ring.Ring interface")
}
