package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildFlags are the flags that ring/zenq's doc says to build it with.
var buildFlags = regexp.MustCompile(`go test (-tags \S+ -ldflags=\S+) `)

// TestTheFrontPageNamesEveryRingBackend fails when README.md does not name
// each ring backend of the repository (a folder of ring/ with a Factory),
// or names the build-tagged ring/zenq without the flags its doc gives: a
// reader must see that it is not one more option for a program of theirs.
func TestTheFrontPageNamesEveryRingBackend(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	text := strings.Join(strings.Fields(string(readme)), " ")
	dirs, err := os.ReadDir("../../ring")
	require.NoError(t, err)
	backends := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		files, err := filepath.Glob(filepath.Join("../../ring", d.Name(), "*.go"))
		require.NoError(t, err)
		var factory bool
		for _, f := range files {
			src, err := os.ReadFile(f)
			require.NoError(t, err)
			factory = factory || strings.Contains(string(src), "\nfunc Factory[")
		}
		if !factory {
			continue
		}
		backends++
		require.Contains(t, text, "ring/"+d.Name(), "README.md does not name the ring backend ring/%s", d.Name())
	}
	require.GreaterOrEqual(t, backends, 4, "the ring backends were not found")

	doc, err := os.ReadFile("../../ring/zenq/doc.go")
	require.NoError(t, err)
	m := buildFlags.FindSubmatch(doc)
	require.NotNil(t, m, "ring/zenq/doc.go gives no go test -tags ... -ldflags=... line")
	require.Contains(t, text, "`ring/zenq` is for benchmarks: `"+string(m[1])+"`",
		"README.md does not say, where it lists the backends, that ring/zenq needs its build flags")
}
