package zapsink_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/shardedsink/shardedsink/internal/benchtxt"
	"github.com/shardedsink/shardedsink/internal/logprobe"
)

var update = flag.Bool("update", false, "rewrite the generated block of docs/benchmarks.md")

// TestBenchmarksDocMatchesBenchTxt renders the zapsink block of
// docs/benchmarks.md from testdata/bench.txt (which bash
// zapsink/testdata/bench.sh writes) and compares it with the block between
// the zapsink:begin and zapsink:end markers, so that the two cannot drift.
// bench.sh rewrites the block at its end, as does
//
//	go test . -run TestBenchmarksDocMatchesBenchTxt -update
func TestBenchmarksDocMatchesBenchTxt(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "bench.txt"))
	if err != nil {
		t.Fatal(err)
	}
	modes := []string{"floor-zap-Discard", "zap-AddSync", "zap-BufferedWriteSyncer", "zapsink-Core", "zapsink-WriteSyncer"}
	want, err := logprobe.Table(raw, "bash zapsink/testdata/bench.sh", modes, []string{"zapsink-Core-NoHandOff", "zapsink-Core-SpillDir"}, []string{"zap", "zapsink-Core"}, []string{"floor-none", "zapsink-Core"})
	if err != nil {
		t.Fatalf("testdata/bench.txt: %v", err)
	}
	if err := benchtxt.SyncBlock(filepath.Join("..", "docs", "benchmarks.md"), "zapsink", want, *update); err != nil {
		t.Error(err)
	}
}
