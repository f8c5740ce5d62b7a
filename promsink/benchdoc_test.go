package promsink_test

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

// TestBenchmarksDocMatchesBenchTxt renders the metrics table of
// docs/benchmarks.md from testdata/bench.txt (which bash
// promsink/testdata/bench.sh writes) and compares it with the block between
// the promsink:begin and promsink:end markers, so that the figures in the
// documentation are the committed run's (-update rewrites the block).
func TestBenchmarksDocMatchesBenchTxt(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "bench.txt"))
	require.NoError(t, err)
	want, err := renderBenchTable(raw)
	require.NoError(t, err, "testdata/bench.txt")
	require.NoError(t, benchtxt.SyncBlock(filepath.Join("..", "docs", "benchmarks.md"), "promsink", want, *update))
}

// scrapeRows are the first table's rows: benchmark, label, goal.
var scrapeRows = []struct{ bench, label, goal string }{
	{"BenchmarkCollect/shards=64/per-shard=false", "promsink Collect, totals (8 series)", "<= 20 µs; allocations: what the metrics need"},
	{"BenchmarkCollect/shards=64/per-shard=true", "promsink Collect, WithPerShard (449 series)", ""},
	{"BenchmarkGather", "promsink through the registry's Gather (totals; Write and checks included)", ""},
	{"BenchmarkReaderCollect/shards=64/per-shard=false", "otelmetric through the SDK's ManualReader.Collect (totals)", ""},
	{"BenchmarkStats", "sink.Stats alone", "<= 1 µs"},
}

func renderBenchTable(raw []byte) (string, error) {
	run, err := benchtxt.Parse(raw)
	if err != nil {
		return "", err
	}
	spread := benchtxt.Spread
	var b strings.Builder
	fmt.Fprintf(&b, "Measured by `bash promsink/testdata/bench.sh` (promsink/testdata/bench.txt): %s; %s. "+
		"A sink of 64 shards; medians (min-max) of the runs.\n\n", run.Header, run.End)
	b.WriteString("| a scrape of 64 shards | time | allocations | bytes | goal |\n|---|---:|---:|---:|---|\n")
	for _, r := range scrapeRows {
		v := run.Values[r.bench]
		if len(v["ns/op"]) == 0 {
			return "", fmt.Errorf("no ns/op for %s", r.bench)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.label, spread(v["ns/op"], 1e-3, 1, " µs"),
			spread(v["allocs/op"], 1, 0, ""), spread(v["B/op"], 1, 0, ""), r.goal)
	}
	none, scraped := run.Values["BenchmarkPushWhileScraped/scrape=none"], run.Values["BenchmarkPushWhileScraped/scrape=100ms"]
	if len(none["ns/op"]) == 0 || len(scraped["ns/op"]) == 0 {
		return "", fmt.Errorf("no BenchmarkPushWhileScraped runs")
	}
	b.WriteString("\n| 64 producers push into 64 shards | wall ns per push | dropped | scrapes per run |\n|---|---:|---:|---:|\n")
	for _, r := range []struct {
		label string
		v     map[string][]float64
	}{{"no collector", none}, {"a collector gathered every 100 ms", scraped}} {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.label, spread(r.v["ns/op"], 1, 2, ""),
			spread(r.v["drop-%"], 1, 1, " %"), spread(r.v["scrapes"], 1, 0, ""))
	}
	fmt.Fprintf(&b, "\nThe push cost with the collector scraped, against none: %+.1f %% (medians; the goal: within 2 %%).\n",
		100*(benchtxt.Median(scraped["ns/op"])/benchtxt.Median(none["ns/op"])-1))
	return b.String(), nil
}
