package promsink_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestThePackageLinksNoNATS: promsink imports neither natssink nor NATS,
// and its module requires neither (natsprom, a module of its own, does),
// as its package doc promises.
func TestThePackageLinksNoNATS(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, p := range strings.Fields(string(out)) {
		require.NotContains(t, p, "nats", "promsink depends on %s", p)
	}
	require.Contains(t, strings.Fields(string(out)), "github.com/prometheus/client_golang/prometheus")
	cmd := exec.Command("go", "mod", "graph")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NotContains(t, string(out), "nats", "promsink's module graph")
}
