package vyukov_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/ringtest"
	"github.com/shardedsink/shardedsink/ring/vyukov"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var _ ring.Factory[int] = vyukov.Factory[int]

func TestConformance(t *testing.T) {
	ringtest.Run(t, vyukov.Factory[int])
}

func TestReleases(t *testing.T) {
	ringtest.RunReleases(t, vyukov.Factory[*[64]byte])
}

func FuzzRing(f *testing.F) {
	ringtest.Fuzz(f, vyukov.Factory[int])
}

func TestNewPanicsOnCapacityBelowOne(t *testing.T) {
	ringtest.RunBadCapacity(t, vyukov.Factory[int], "vyukov")
}

func TestTryPushAndTryPopDoNotAllocate(t *testing.T) {
	ringtest.RunNoAllocs(t, vyukov.Factory[int])
}
