package floor

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// module is the core module's path.
const module = "github.com/shardedsink/shardedsink"

// above returns the packages of this repository outside internal/ that
// the packages of pattern depend on (go list -deps: their builds, not
// their tests), and the number of packages listed.
func above(t *testing.T, pattern string) (pkgs []string, listed int) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pattern).CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	for _, p := range deps {
		if (p == module || strings.HasPrefix(p, module+"/")) && !strings.HasPrefix(p, module+"/internal/") {
			pkgs = append(pkgs, p)
		}
	}
	return pkgs, len(deps)
}

// TestInternalImportsNothingAboveIt: no package under internal/ depends
// on sink or any other package of the repository outside internal/.
// internal/dropload did, for the metrics modules' tests, while sink
// imported internal/ (issue 65); it is sink/sinktest now.
func TestInternalImportsNothingAboveIt(t *testing.T) {
	pkgs, listed := above(t, module+"/internal/...")
	require.Empty(t, pkgs, "packages under internal/ depend on these packages above it")
	require.Greater(t, listed, 10, "go list listed too few packages to have read internal/")
}

// TestTheCheckFindsAnImportOfSink: the check names sink for a package
// that imports it, as internal/dropload did.
func TestTheCheckFindsAnImportOfSink(t *testing.T) {
	pkgs, _ := above(t, module+"/sink/sinktest")
	require.Contains(t, pkgs, module+"/sink")
}
