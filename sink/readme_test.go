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

// TestReadmeStatesThePackageGuarantees keeps the README's summary of the
// guarantees equal to the first sentence of each item of the package doc's
// list, so that the list has one source.
func TestReadmeStatesThePackageGuarantees(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	section := string(doc)
	section = section[strings.Index(section, "// # Guarantees"):]
	section = section[:strings.Index(section, "\n//\n// Push returning true")]
	var want strings.Builder
	for _, m := range guaranteeItem.FindAllStringSubmatch(section, -1) {
		body := strings.ReplaceAll(m[2], "\n//     ", " ")
		want.WriteString(m[1] + ". " + firstSentence(body) + "\n")
	}
	require.NotEmpty(t, want.String(), "no guarantees found in doc.go")

	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	const begin, end = "<!-- guarantees:begin", "<!-- guarantees:end -->"
	text := string(readme)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	require.True(t, i >= 0 && j > i, "README.md has no guarantees block")
	block := text[i:j]
	block = block[strings.Index(block, "\n")+1:]
	require.Equal(t, want.String(), block,
		"README.md's guarantees differ from the first sentences of sink/doc.go's list; copy them:\n%s", want.String())
}
