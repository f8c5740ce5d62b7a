package otelsink_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/benchtxt"
)

// TestMeasuredTableMatchesBenchTxt renders README.md's measured table from
// testdata/bench.txt (which bash testdata/bench.sh writes) and compares it
// with the block between the measured:begin and measured:end markers, so
// that the figures in the README are the committed run's and cannot drift
// (-update rewrites the block; bench.sh does so at its end).
func TestMeasuredTableMatchesBenchTxt(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "bench.txt"))
	require.NoError(t, err)
	table, err := renderMeasured(raw)
	require.NoError(t, err, "testdata/bench.txt")
	requireGenerated(t, "README.md", "measured", table)
}

// measuredRows are the table's rows: a benchmark (with %s for the
// processor), its two processors' names there, and the metrics shown.
var measuredRows = []struct {
	label, bench, sdk, ours, cpuUnit string
}{
	{"whole span, 1 goroutine", "BenchmarkExportedShare/g=1/impl=%s", "bsp", "otelsink", "cpu-ns/span"},
	{"whole span, 64 goroutines", "BenchmarkExportedShare/g=64/impl=%s", "bsp", "otelsink", "cpu-ns/span"},
	{"OnEnd on a span made once, 64 goroutines", "BenchmarkOnEndThreads/exporter=noop/g=64/impl=%s", "bsp", "otelsink", "cpu-ns/span"},
	{"OnEmit, 1 goroutine", "BenchmarkOnEmitThreads/g=1/impl=%s", "batchprocessor", "otelsink", "cpu-ns/record"},
	{"OnEmit, 16 goroutines", "BenchmarkOnEmitThreads/g=16/impl=%s", "batchprocessor", "otelsink", "cpu-ns/record"},
	{"OnEmit, 64 goroutines", "BenchmarkOnEmitThreads/g=64/impl=%s", "batchprocessor", "otelsink", "cpu-ns/record"},
}

// renderMeasured is the generated block: the run's header, then per row
// the CPU per item and the exported share of both processors, medians
// (min-max) of the runs, and the ratio of the CPU medians.
func renderMeasured(raw []byte) (string, error) {
	run, err := benchtxt.Parse(raw)
	if err != nil {
		return "", err
	}
	values := run.Values
	var b strings.Builder
	fmt.Fprintf(&b, "Measured by `bash otelsink/testdata/bench.sh` (testdata/bench.txt): %s, %s; %s. Medians (min-max) of the runs; "+
		"CPU is per-thread CPU (`CLOCK_THREAD_CPUTIME_ID`) summed over the locked threads, per item; exported is the share of the items ended "+
		"or emitted that reached the exporter, counted after Shutdown.\n\n", run.CPU, run.Header, run.End)
	b.WriteString("| items | SDK's CPU ns | otelsink's CPU ns | otelsink / SDK | SDK exported | otelsink exported |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|\n")
	for _, r := range measuredRows {
		sdk, ours := values[fmt.Sprintf(r.bench, r.sdk)], values[fmt.Sprintf(r.bench, r.ours)]
		if len(sdk[r.cpuUnit]) == 0 || len(ours[r.cpuUnit]) == 0 {
			return "", fmt.Errorf("no %s for %s", r.cpuUnit, fmt.Sprintf(r.bench, r.sdk+"|"+r.ours))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.2fx | %s | %s |\n", r.label,
			benchtxt.Spread(sdk[r.cpuUnit], 1, 0, ""), benchtxt.Spread(ours[r.cpuUnit], 1, 0, ""),
			benchtxt.Median(ours[r.cpuUnit])/benchtxt.Median(sdk[r.cpuUnit]),
			benchtxt.Spread(sdk["exported-%"], 1, 1, " %"), benchtxt.Spread(ours["exported-%"], 1, 1, " %"))
	}
	return b.String(), nil
}
