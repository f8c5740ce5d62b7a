package main

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRunAddsUp(t *testing.T) {
	for _, pace := range []time.Duration{0, time.Millisecond} {
		if err := run(16, 1000, 64, pace); err != nil {
			t.Fatalf("pace %v: %v", pace, err)
		}
	}
}
