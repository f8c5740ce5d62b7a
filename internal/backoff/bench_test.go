package backoff

import (
	"runtime"
	"testing"
)

// The two costs that snoozeSpins trades: spinning (an iteration of
// spinHint, 2^step of them per Snooze step) against yielding (a Gosched,
// which costs this much even when nothing else is runnable and the owner
// was about to finish on the other core).
//
//	go test -run '^$' -bench . ./internal/backoff/
func BenchmarkSpinIteration(b *testing.B) {
	for b.Loop() {
		spinHint()
	}
}

func BenchmarkGoschedWithNothingElseToRun(b *testing.B) {
	for b.Loop() {
		runtime.Gosched()
	}
}

// BenchmarkSnoozeUntilItYields is the spinning a wait does before its first
// yield: the longest a wait for an owner that is running costs without a
// Gosched.
func BenchmarkSnoozeUntilItYields(b *testing.B) {
	for b.Loop() {
		var s Backoff
		for s.step < snoozeSpins {
			s.Snooze()
		}
	}
}
