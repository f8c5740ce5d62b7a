package cpuload

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// An idle process is not short; one whose goroutines spin on every
// processor is, within a few windows. (Another process loading the
// machine can make the second half read not short: that is skipped, not
// failed, since Short cannot see other processes by design.)
func TestShortFollowsTheProcesssCPU(t *testing.T) {
	time.Sleep(3 * Window)
	Short()
	time.Sleep(3 * Window)
	if Short() {
		t.Fatal("an idle process reads short")
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for !stop.Load() {
			}
		})
	}
	defer func() { stop.Store(true); wg.Wait() }()
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
		if Short() {
			return
		}
		time.Sleep(Window / 4)
	}
	t.Skip("spinning goroutines on every processor did not read short within a second: the machine is loaded by other processes")
}

// Force overrides the reading until its cleanup runs.
func TestForce(t *testing.T) {
	var undo []func()
	Force(func(f func()) { undo = append(undo, f) }, true)
	if !Short() {
		t.Fatal("forced short reads not short")
	}
	Force(func(f func()) { undo = append(undo, f) }, false)
	if Short() {
		t.Fatal("forced not short reads short")
	}
	for i := len(undo) - 1; i >= 0; i-- {
		undo[i]()
	}
	if gauge.forced.Load() != 0 {
		t.Fatal("cleanup did not restore the reading")
	}
}
