package ringtest_test

import "testing"

// TestExampleRingConforms runs the kit on the example's ring, so that the
// ring the documentation shows is one that passes it.
func TestExampleRingConforms(t *testing.T) {
	conformance(t)
}
