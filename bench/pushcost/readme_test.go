package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestReadmeMatchesTheCommittedRun renders bench/pushcost/results.txt and
// compares it with the README's "Push costs" tables, between the
// pushcost:begin and pushcost:end markers, so that the two cannot drift.
func TestReadmeMatchesTheCommittedRun(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- pushcost:begin -->\n", "\n<!-- pushcost:end -->"
	i := bytes.Index(readme, []byte(begin))
	j := bytes.Index(readme, []byte(end))
	if i < 0 || j < i {
		t.Fatal("README.md has no pushcost:begin/end markers")
	}
	inReadme := string(readme[i+len(begin) : j])

	var out, errOut bytes.Buffer
	if err := run([]string{"-from", "results.txt"}, &out, &errOut); err != nil {
		t.Fatal(err, errOut.String())
	}
	if want := strings.TrimRight(out.String(), "\n"); inReadme != want {
		t.Errorf("README.md's push-cost tables differ from results.txt; regenerate with\n"+
			"\tgo run ./bench/pushcost -from bench/pushcost/results.txt\nand paste between the markers.\nREADME:\n%s\nresults.txt:\n%s", inReadme, want)
	}
}
