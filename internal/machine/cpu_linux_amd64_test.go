package machine

import "testing"

// TestCPUReadsTheCPUItRunsOn pins a thread to each CPU of the set in turn
// (up to 16) and checks that CPU returns that number there.
func TestCPUReadsTheCPUItRunsOn(t *testing.T) {
	if !CPUReadable() {
		reason := "IA32_TSC_AUX disagrees with getcpu (the hypervisor does not keep it)"
		if !hasRDPID() {
			reason = "the processor has no RDPID"
		}
		t.Skipf("CPU numbers are not readable on this machine: %s; sink's CPU-home tests cover the table without it", reason)
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
