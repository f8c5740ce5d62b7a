package engine

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: every
// Writer a test makes is closed, and Close must stop its workers.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
