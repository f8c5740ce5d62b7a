package promsink_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestThePackageLinksNoNATS: promsink itself imports neither natssink nor
// NATS (natsprom does), as its package doc promises.
func TestThePackageLinksNoNATS(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, p := range strings.Fields(string(out)) {
		require.NotContains(t, p, "nats", "promsink depends on %s", p)
	}
	require.Contains(t, strings.Fields(string(out)), "github.com/prometheus/client_golang/prometheus")
}
