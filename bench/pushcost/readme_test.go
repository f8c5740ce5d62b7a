package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/shardedsink/shardedsink/bench/internal/commandtest"
)

// TestReadmeMatchesTheCommittedRun renders bench/pushcost/results.txt and
// compares it with the "Push costs" tables between the pushcost:begin and
// pushcost:end markers, in every markdown file of the repository that holds
// them (docs/benchmarks.md), so that the two cannot drift.
func TestReadmeMatchesTheCommittedRun(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run([]string{"-from", "results.txt"}, &out, &errOut); err != nil {
		t.Fatal(err, errOut.String())
	}
	want := strings.TrimRight(out.String(), "\n")

	const begin, end = "<!-- pushcost:begin -->\n", "\n<!-- pushcost:end -->"
	files := commandtest.MarkdownWith(t, "../..", "<!-- pushcost:begin")
	if len(files) == 0 {
		t.Fatal("no markdown file of the repository holds the pushcost:begin/end markers")
	}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		i := bytes.Index(text, []byte(begin))
		j := bytes.Index(text, []byte(end))
		if i < 0 || j < i {
			t.Errorf("%s: no pushcost:begin/end pair of markers", f)
			continue
		}
		if got := string(text[i+len(begin) : j]); got != want {
			t.Errorf("%s: the push-cost tables differ from results.txt; regenerate with\n"+
				"\tgo run ./bench/pushcost -from bench/pushcost/results.txt\nand paste between the markers.\nIn the file:\n%s\nresults.txt:\n%s", f, got, want)
		}
	}
}
