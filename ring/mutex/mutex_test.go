package mutex_test

import (
	"testing"

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
	ringtest.RunBadCapacity(t, mutex.Factory[int], "mutex")
}

func TestTryPushAndTryPopDoNotAllocate(t *testing.T) {
	ringtest.RunNoAllocs(t, mutex.Factory[int])
}
