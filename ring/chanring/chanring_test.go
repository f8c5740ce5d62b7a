package chanring_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/chanring"
	"github.com/shardedsink/shardedsink/ring/ringtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var _ ring.Factory[int] = chanring.Factory[int]

func TestConformance(t *testing.T) {
	ringtest.Run(t, chanring.Factory[int])
}

func TestReleases(t *testing.T) {
	ringtest.RunReleases(t, chanring.Factory[*[64]byte])
}

func FuzzRing(f *testing.F) {
	ringtest.Fuzz(f, chanring.Factory[int])
}

func TestNewPanicsOnCapacityBelowOne(t *testing.T) {
	ringtest.RunBadCapacity(t, chanring.Factory[int], "chanring")
}

func TestTryPushAndTryPopDoNotAllocate(t *testing.T) {
	ringtest.RunNoAllocs(t, chanring.Factory[int])
}
