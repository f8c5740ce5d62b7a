package slogsink_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardedsink/shardedsink/internal/benchtxt"
)

// TestKeepWaitDocMatchesKeepWaitTxt renders the keepwait table of
// docs/benchmarks.md from testdata/keepwait.txt (which bash
// slogsink/testdata/keepwait.sh writes) and compares it with the block
// between the keepwait:begin and keepwait:end markers. keepwait.sh
// rewrites the block at its end, as does
//
//	go test ./slogsink/ -run TestKeepWaitDocMatchesKeepWaitTxt -update
func TestKeepWaitDocMatchesKeepWaitTxt(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "keepwait.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := renderKeepWaitTable(raw)
	if err != nil {
		t.Fatalf("testdata/keepwait.txt: %v", err)
	}
	if err := benchtxt.SyncBlock(filepath.Join("..", "docs", "benchmarks.md"), "keepwait", want, *update); err != nil {
		t.Error(err)
	}
}

// keepWaitRows are the rows of the table, each a metric of a benchmark
// whose name holds a %s for the KeepWait setting (the columns).
var keepWaitRows = []benchRow{
	{"burst of 6,400 Errors, 500 µs writer: dropped", "BenchmarkKeepWaitBurst/keepwait=%s", "dropped", count},
	{"burst: the longest call", "BenchmarkKeepWaitBurst/keepwait=%s", "max-call-ns", nanos},
	{"pipe stalled 200 ms of 1 s: Errors lost in the stall", "BenchmarkKeepWait/stall=200ms/keepwait=%s", "kept-lost", count},
	{"pipe stalled 200 ms: Errors logged in the stall", "BenchmarkKeepWait/stall=200ms/keepwait=%s", "kept-calls", count},
	{"pipe stalled 200 ms: p99 of a call", "BenchmarkKeepWait/stall=200ms/keepwait=%s", "p99-call-ns", nanos},
	{"pipe stalled 1 s of 2 s: Errors lost in the stall", "BenchmarkKeepWait/stall=1s/keepwait=%s", "kept-lost", count},
	{"pipe stalled 1 s: Errors logged in the stall", "BenchmarkKeepWait/stall=1s/keepwait=%s", "kept-calls", count},
	{"pipe stalled 1 s: p99 of a call", "BenchmarkKeepWait/stall=1s/keepwait=%s", "p99-call-ns", nanos},
	{"pipe stalled 1 s: the longest call", "BenchmarkKeepWait/stall=1s/keepwait=%s", "max-call-ns", nanos},
}

// renderKeepWaitTable renders the markdown between the markers: where the
// figures come from, and a column per KeepWait setting with the range of
// the runs.
func renderKeepWaitTable(raw []byte) (string, error) {
	r, err := benchtxt.Parse(raw)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Measured by `bash slogsink/testdata/keepwait.sh`: %s, %s; ranges of the runs. At the end: %s.", r.Header, r.CPU, r.End)
	b.WriteString("\n\n| | KeepWait off (-1) | 1 ms (default) | 10 ms | 1 ms, with SpillDir |\n|---|---:|---:|---:|---:|\n")
	for _, row := range keepWaitRows {
		fmt.Fprintf(&b, "| %s |", row.label)
		for _, col := range []string{"0", "1ms", "10ms", "1ms/spill"} {
			v := r.Values[fmt.Sprintf(row.bench, col)][row.unit]
			if len(v) == 0 && col == "1ms/spill" {
				b.WriteString(" – |") // the burst runs no spill directory
				continue
			}
			if len(v) == 0 {
				return "", fmt.Errorf("no %s of %s", row.unit, fmt.Sprintf(row.bench, col))
			}
			fmt.Fprintf(&b, " %s |", cell(v, row.show))
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}
