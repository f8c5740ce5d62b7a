// Package seriestest checks that a package doc lists the series of its
// tables, for the tests of promsink and promsink/natsprom.
package seriestest

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/promsink/internal/series"
)

// listed matches a series' line in a package doc: a tab, the name, spaces,
// its type.
var listed = regexp.MustCompile(`(?m)^//\t(` + series.Namespace + `_[a-z_]+) +(counter|gauge) `)

// CheckDoc fails t unless the doc comment in file lists exactly names (one
// line each, with its type), gives each label value of values (as
// label="value" or "value"), and names no other series; mentions of the
// series in others, listed in another package's doc, are allowed too.
func CheckDoc(t *testing.T, file string, names, values, others []string) {
	t.Helper()
	doc, err := os.ReadFile(file)
	require.NoError(t, err)
	var inDoc []string
	for _, m := range listed.FindAllSubmatch(doc, -1) {
		inDoc = append(inDoc, string(m[1]))
	}
	require.ElementsMatch(t, names, inDoc, "the series listed in %s", file)
	for _, v := range values {
		quoted := regexp.MustCompile(`=(".*")$`).FindStringSubmatch(v)[1]
		require.True(t, strings.Contains(string(doc), quoted), "%s gives the label value %s", file, v)
	}
	for _, m := range regexp.MustCompile(series.Namespace+`_[a-z_]+`).FindAll(doc, -1) {
		require.Contains(t, append(append([]string{}, names...), others...), string(m), "%s names a series no table has", file)
	}
}
