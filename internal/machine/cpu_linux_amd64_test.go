package machine

import (
	"runtime"
	"testing"
)

// TestCPUReadsTheCPUItRunsOn pins a thread to each CPU of the set in turn
// (up to 16) and checks that CPU returns that number there.
func TestCPUReadsTheCPUItRunsOn(t *testing.T) {
	if !CPUReadable() {
		if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
			t.Logf("CPU numbers are not readable on this machine (no RDPID, or IA32_TSC_AUX not kept)")
		}
		return
	}
	cpus := CPUs()
	if len(cpus) > 16 {
		cpus = cpus[:16]
	}
	for _, c := range cpus {
		if !agreesOn(c) {
			t.Errorf("on a thread pinned to CPU %d, CPU() or getcpu disagreed", c)
		}
	}
}
