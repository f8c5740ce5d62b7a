// Package instrumentstest checks that a package doc lists the instruments
// of its tables, for the tests of otelmetric and otelmetric/natsmetric.
package instrumentstest

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// listed matches an instrument's line in a package doc: a tab, the name,
// spaces, its kind.
var listed = regexp.MustCompile(`(?m)^//\t(shardedsink\.[a-z_.]+) +(counter|updowncounter) `)

// CheckDoc fails t unless the doc comment in file lists exactly names (one
// line each, with its kind), gives each attribute of attrs (key=value),
// and names no other shardedsink instrument than names and others.
func CheckDoc(t *testing.T, file string, names, attrs, others []string) {
	t.Helper()
	doc, err := os.ReadFile(file)
	require.NoError(t, err)
	var inDoc []string
	for _, m := range listed.FindAllSubmatch(doc, -1) {
		inDoc = append(inDoc, string(m[1]))
	}
	require.ElementsMatch(t, names, inDoc, "the instruments listed in %s", file)
	for _, a := range attrs {
		require.True(t, strings.Contains(string(doc), a), "%s gives the attribute %s", file, a)
	}
	known := append(append([]string{"shardedsink.sink.name", "shardedsink.shard", "shardedsink.log.level"}, names...), others...)
	for _, m := range regexp.MustCompile(`shardedsink\.[a-z_]+(\.[a-z_]+)*`).FindAll(doc, -1) {
		require.Contains(t, known, string(m), "%s names an instrument no table has", file)
	}
}
