package natssink_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/benchtxt"
)

var update = flag.Bool("update", false, "rewrite the generated table in docs/benchmarks.md from testdata/bench.txt")

// TestBenchmarksDocMatchesBenchTxt renders the NATS table of
// docs/benchmarks.md from testdata/bench.txt (which bash
// natssink/testdata/bench.sh writes) and compares it with the block between
// the natssink:begin and natssink:end markers, so that the figures in the
// documentation are the committed run's (-update rewrites the block).
func TestBenchmarksDocMatchesBenchTxt(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "bench.txt"))
	require.NoError(t, err)
	want, err := renderBenchTable(raw)
	require.NoError(t, err, "testdata/bench.txt")
	require.NoError(t, benchtxt.SyncBlock(filepath.Join("..", "docs", "benchmarks.md"), "natssink", want, *update))

	var runs [2][]byte
	for i, name := range []string{"bench-16core.txt", "bench-16core-procs4.txt"} {
		runs[i], err = os.ReadFile(filepath.Join("testdata", name))
		require.NoError(t, err)
	}
	want, err = renderManycoreTable(runs[0], runs[1])
	require.NoError(t, err, "testdata/bench-16core*.txt")
	require.NoError(t, benchtxt.SyncBlock(filepath.Join("..", "docs", "benchmarks.md"), "natssink-manycore", want, *update))
}

// benchRows are the table's rows: BenchmarkProducers' impls.
var benchRows = []struct{ impl, label string }{
	{"natssink", "natssink (rings that hold the burst)"},
	{"natssink-fastbatch", "natssink, fast batches (a stream with allow_batched)"},
	{"natssink-b1024", "natssink, batches of 1,024 values"},
	{"natssink-fastbatch-b1024", "natssink, fast batches of 1,024 values"},
	{"natssink-default-rings", "natssink, default rings"},
	{"publish", "each producer calls js.Publish"},
	{"publishasync", "each producer calls js.PublishAsync"},
	{"publishasync-msgid", "js.PublishAsync with a Nats-Msg-Id per message"},
}

func renderBenchTable(raw []byte) (string, error) {
	run, err := benchtxt.Parse(raw)
	if err != nil {
		return "", err
	}
	values, spread := run.Values, benchtxt.Spread
	get := func(impl, unit string) []float64 { return values["BenchmarkProducers/impl="+impl][unit] }
	var b strings.Builder
	fmt.Fprintf(&b, "Measured by `bash natssink/testdata/bench.sh` (natssink/testdata/bench.txt): %s, %s; %s. 64 producer goroutines, "+
		"~195-byte values, an embedded server with a memory stream; medians (min-max) of the runs. Producer p99: one call (Push, "+
		"Publish or PublishAsync); CPU: the whole process's (server, client, producers) per acked value.\n\n", run.Header, run.CPU, run.End)
	b.WriteString("| producers push through | acked/s | vs natssink | producer p99 | dropped | CPU per acked value | allocations per value |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	ours := benchtxt.Median(get("natssink", "acked/s"))
	for _, r := range benchRows {
		acked := get(r.impl, "acked/s")
		if len(acked) == 0 {
			return "", fmt.Errorf("no acked/s for impl=%s", r.impl)
		}
		fmt.Fprintf(&b, "| %s | %s | %.2fx | %s | %s | %s | %s |\n", r.label,
			spread(acked, 1e-3, 1, " k"), ours/benchtxt.Median(acked),
			spread(get(r.impl, "p99-ns"), 1e-3, 1, " µs"), spread(get(r.impl, "drop-%"), 1, 1, " %"),
			spread(get(r.impl, "cpu-ns/acked"), 1e-3, 1, " µs"), spread(get(r.impl, "allocs/op"), 1, 0, ""))
	}
	if d := values["BenchmarkDrainPath"]["allocs/op"]; len(d) > 0 {
		fmt.Fprintf(&b, "\nThe drain path alone (BenchmarkDrainPath): %s allocations per value.\n", spread(d, 1, 0, ""))
	}
	return b.String(), nil
}

// renderManycoreTable renders the run on a machine of many cores
// (testdata/manycore.sh): BenchmarkProducers at GOMAXPROCS=16 (all) and at
// GOMAXPROCS=4 (few), side by side.
func renderManycoreTable(all, few []byte) (string, error) {
	var runs [2]*benchtxt.Run
	for i, raw := range [][]byte{all, few} {
		var err error
		if runs[i], err = benchtxt.Parse(raw); err != nil {
			return "", err
		}
	}
	spread := benchtxt.Spread
	get := func(run *benchtxt.Run, impl, unit string) []float64 {
		return run.Values["BenchmarkProducers/impl="+impl][unit]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Measured once, on a machine lent to this work for minutes, by `natssink/testdata/manycore.sh` "+
		"(natssink/testdata/bench-16core.txt and bench-16core-procs4.txt): %s; %s; %s. The GOMAXPROCS=4 columns, on the same "+
		"machine: %s; %s. As in the table above: 64 producer goroutines, ~195-byte values, an embedded server with a memory "+
		"stream, medians (min-max) of the runs, CPU of the whole process per acked value (at GOMAXPROCS=16).\n\n",
		runs[0].CPU, runs[0].Header, runs[0].End, runs[1].Header, runs[1].End)
	b.WriteString("| producers push through | acked/s, GOMAXPROCS=16 | vs natssink | dropped | CPU per acked value | acked/s, GOMAXPROCS=4 | vs natssink | dropped |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	var ours [2]float64
	for i, run := range runs {
		ours[i] = benchtxt.Median(get(run, "natssink", "acked/s"))
	}
	for _, r := range benchRows {
		fmt.Fprintf(&b, "| %s |", r.label)
		for i, run := range runs {
			acked := get(run, r.impl, "acked/s")
			if len(acked) == 0 {
				return "", fmt.Errorf("no acked/s for impl=%s in run %q", r.impl, run.Header)
			}
			fmt.Fprintf(&b, " %s | %.2fx | %s |", spread(acked, 1e-3, 1, " k"), ours[i]/benchtxt.Median(acked),
				spread(get(run, r.impl, "drop-%"), 1, 1, " %"))
			if i == 0 {
				fmt.Fprintf(&b, " %s |", spread(get(run, r.impl, "cpu-ns/acked"), 1e-3, 1, " µs"))
			}
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}
