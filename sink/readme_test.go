package sink_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// guaranteeItem is one numbered item of the package doc's Guarantees list:
// "//  N. text" and its continuation lines "//     text".
var guaranteeItem = regexp.MustCompile(`(?m)^//  (\d+)\. (.*(?:\n//     .*)*)`)

// docLink is a doc comment's link to a name, [Sink.Push], which markdown
// shows as plain text.
var docLink = regexp.MustCompile(`\[([A-Za-z][A-Za-z.]*)\]`)

// firstSentence returns text up to and including its first full stop that
// ends a sentence, with doc links as plain names.
func firstSentence(text string) string {
	text = docLink.ReplaceAllString(strings.Join(strings.Fields(text), " "), "$1")
	if i := strings.Index(text, ". "); i >= 0 {
		return text[:i+1]
	}
	return text
}

// citation is a README guarantee's reference to the package doc's items:
// "(guarantees 1, 2)" or "(guarantee 10)".
var citation = regexp.MustCompile(`\(guarantees? ([0-9, ]+)\)`)

// TestReadmeCitesEveryPackageGuarantee keeps the README's user-level summary
// of the guarantees tied to the package doc's list, their one source: every
// line of the README's block cites items of the list that exist, and every
// item is cited by some line, so an item added, removed or renumbered in
// doc.go fails here until the README says it.
func TestReadmeCitesEveryPackageGuarantee(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	section := string(doc)
	section = section[strings.Index(section, "// # Guarantees"):]
	section = section[:strings.Index(section, "\n//\n// Push returning true")]
	items := map[string]bool{}
	for _, m := range guaranteeItem.FindAllStringSubmatch(section, -1) {
		require.NotEmpty(t, firstSentence(m[2]), "guarantee %s", m[1])
		items[m[1]] = false
	}
	require.NotEmpty(t, items, "no guarantees found in doc.go")

	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	const begin, end = "<!-- guarantees:begin", "<!-- guarantees:end -->"
	text := string(readme)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	require.True(t, i >= 0 && j > i, "README.md has no guarantees block")
	block := strings.TrimSpace(text[i+strings.Index(text[i:], "\n")+1 : j])
	lines := strings.Split(block, "\n")
	require.LessOrEqual(t, len(lines), 5, "at most five sentences on the front page")
	for _, line := range lines {
		m := citation.FindStringSubmatch(line)
		require.NotNil(t, m, "README.md guarantee %q cites no item of sink/doc.go's list", line)
		for _, n := range strings.Split(m[1], ",") {
			n = strings.TrimSpace(n)
			_, ok := items[n]
			require.True(t, ok, "README.md guarantee %q cites item %s, which sink/doc.go's list does not have", line, n)
			items[n] = true
		}
	}
	for n, cited := range items {
		require.True(t, cited, "sink/doc.go's guarantee %s is cited by no line of README.md's guarantees", n)
	}
}
