package natssink_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// guaranteeItem is one numbered item of the package doc's Guarantees
// list: "//  N. text" and its continuation lines "//     text".
var guaranteeItem = regexp.MustCompile(`(?m)^//  (\d+)\. `)

// citation is a README guarantee's reference to the package doc's items:
// "(guarantees 1, 2)" or "(guarantee 7)".
var citation = regexp.MustCompile(`\(guarantees? ([0-9, ]+)\)`)

// TestReadmeCitesEveryPackageGuarantee keeps README.md's list of the
// guarantees tied to the package doc's, their one source: every line of
// the README's block cites items of the list that exist, and every item
// is cited by some line, so an item added, removed or renumbered in doc.go
// fails here until the README says it.
func TestReadmeCitesEveryPackageGuarantee(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	section := string(doc)
	i := strings.Index(section, "// # Guarantees")
	require.GreaterOrEqual(t, i, 0, "doc.go has no Guarantees section")
	section = section[i+len("// # Guarantees"):]
	if j := strings.Index(section, "\n// # "); j >= 0 {
		section = section[:j]
	}
	items := map[string]bool{}
	for _, m := range guaranteeItem.FindAllStringSubmatch(section, -1) {
		items[m[1]] = false
	}
	require.NotEmpty(t, items, "no guarantees found in doc.go")

	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	const begin, end = "<!-- guarantees:begin", "<!-- guarantees:end -->"
	text := string(readme)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	require.True(t, i >= 0 && j > i, "README.md has no guarantees block")
	for _, line := range strings.Split(strings.TrimSpace(text[i+strings.Index(text[i:], "\n")+1:j]), "\n") {
		m := citation.FindStringSubmatch(line)
		require.NotNil(t, m, "README.md guarantee %q cites no item of doc.go's list", line)
		for _, n := range strings.Split(m[1], ",") {
			n = strings.TrimSpace(n)
			_, ok := items[n]
			require.True(t, ok, "README.md guarantee %q cites item %s, which doc.go's list does not have", line, n)
			items[n] = true
		}
	}
	for n, cited := range items {
		require.True(t, cited, "doc.go's guarantee %s is cited by no line of README.md's guarantees", n)
	}
}
