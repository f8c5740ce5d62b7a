package zerologsink_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/shardedsink/shardedsink/internal/benchtxt"
	"github.com/shardedsink/shardedsink/internal/logprobe"
)

var update = flag.Bool("update", false, "rewrite the generated block of docs/benchmarks.md")

// TestBenchmarksDocMatchesBenchTxt renders the zerologsink block of
// docs/benchmarks.md from testdata/bench.txt (which bash
// zerologsink/testdata/bench.sh writes) and compares it with the block between
// the zerologsink:begin and zerologsink:end markers, so that the two cannot drift.
// bench.sh rewrites the block at its end, as does
//
//	go test . -run TestBenchmarksDocMatchesBenchTxt -update
func TestBenchmarksDocMatchesBenchTxt(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "bench.txt"))
	if err != nil {
		t.Fatal(err)
	}
	modes := []string{"floor-zerolog-Discard", "zerolog", "zerolog-diode", "zerologsink"}
	want, err := logprobe.Table(raw, "bash zerologsink/testdata/bench.sh", modes, []string{"zerologsink-NoHandOff", "zerologsink-SpillDir"}, []string{"zerolog", "zerologsink"}, []string{"floor-none", "zerolog-diode", "zerologsink"})
	if err != nil {
		t.Fatalf("testdata/bench.txt: %v", err)
	}
	if err := benchtxt.SyncBlock(filepath.Join("..", "docs", "benchmarks.md"), "zerologsink", want, *update); err != nil {
		t.Error(err)
	}
}
