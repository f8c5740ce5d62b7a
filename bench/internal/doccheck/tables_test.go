package doccheck_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/bench/internal/doccheck"
)

// TestEveryTableReferencePointsAtATable fails when a document says "the
// table above" (or below) where its section has no table that way.
func TestEveryTableReferencePointsAtATable(t *testing.T) {
	found, err := doccheck.DanglingTableReferences(root, append(documents, "*/README.md")...)
	require.NoError(t, err)
	var lines []string
	for _, r := range found {
		lines = append(lines, fmt.Sprintf("%s:%d: %q, and no table is there", r.File, r.Line, r.Text))
	}
	require.True(t, len(found) == 0, "%s", strings.Join(lines, "\n"))
}
