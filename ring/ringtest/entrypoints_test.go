package ringtest

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNoAllocsCheckCatchesARingThatAllocatesOnceInAHundredCalls(t *testing.T) {
	require.NoError(t, checkNoAllocs(faulty[int](faults{})), "the correct ring")
	err := checkNoAllocs(faulty[int](faults{allocEvery: 100}))
	require.Error(t, err, "an allocation every hundred calls went unseen")
	t.Log(err)
}

// childEnv marks a test process that one of the tests below started to run
// a public entry point on a broken ring.
const childEnv = "RINGTEST_CHILD"

// The public entry points fail the test that calls them on a broken ring:
// each runs in a child test process (its failure would otherwise fail this
// one), which must fail, naming the property.
func TestThePublicEntryPointsFailATestOnABrokenRing(t *testing.T) {
	for _, c := range []struct {
		name, child, want string
	}{
		{"Run on a LIFO stack", "TestChildRunsRunOnALIFOStack",
			"--- FAIL: TestChildRunsRunOnALIFOStack/pushes,_pops,_Len_and_Cap_follow_a_sequential_FIFO_model"},
		{"RunNoAllocs on a ring that allocates once in a hundred calls", "TestChildRunsRunNoAllocsOnARingThatAllocates",
			"TryPop on an empty ring allocates 0.01 times a call"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^"+c.child+"$", "-test.short", "-test.v")
			cmd.Env = append(os.Environ(), childEnv+"=1")
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "the child test passed:\n%s", out)
			require.Contains(t, string(out), "--- FAIL: "+c.child, "%s", out)
			require.Contains(t, string(out), c.want, "%s", out)
		})
	}
}

func TestChildRunsRunOnALIFOStack(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestThePublicEntryPointsFailATestOnABrokenRing in a child process")
	}
	Run(t, faulty[int](faults{lifo: true}))
}

func TestChildRunsRunNoAllocsOnARingThatAllocates(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestThePublicEntryPointsFailATestOnABrokenRing in a child process")
	}
	RunNoAllocs(t, faulty[int](faults{allocEvery: 100}))
}
