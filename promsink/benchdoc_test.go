package promsink_test

import (
	"flag"
	"fmt"
	"math"
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

// scrapeRows are the first table's rows: benchmark, label (a %s takes the
// run's metrics/op), and the goal, if any: a bound on the median time in
// µs, which the table marks met or missed, and what else the goal asks.
var scrapeRows = []struct {
	bench, label string
	limitUs      float64
	also         string
}{
	{"BenchmarkCollect/shards=64/per-shard=false", "promsink Collect, totals (%s series)", 20, "allocations: what the metrics need"},
	{"BenchmarkCollect/shards=64/per-shard=true", "promsink Collect, WithPerShard (%s series)", 0, ""},
	{"BenchmarkGather", "promsink through the registry's Gather (totals; Write and checks included)", 0, ""},
	{"BenchmarkReaderCollect/shards=64/per-shard=false", "otelmetric through the SDK's ManualReader.Collect (totals)", 0, ""},
	{"BenchmarkStats/call=Stats", "sink.Stats alone (allocates PerShard)", 1, ""},
	{"BenchmarkStats/call=ReadStats", "sink.ReadStats alone (into a kept Stats, as the collectors read)", 1, ""},
}

// metOrMissed is a goal's verdict, said in the table so that a missed
// goal is not read as a met one.
func metOrMissed(met bool) string {
	if met {
		return "met"
	}
	return "**missed**"
}

func renderBenchTable(raw []byte) (string, error) {
	run, err := benchtxt.Parse(raw)
	if err != nil {
		return "", err
	}
	spread := benchtxt.Spread
	var b strings.Builder
	fmt.Fprintf(&b, "Measured by `bash promsink/testdata/bench.sh` (promsink/testdata/bench.txt): %s, %s; %s. "+
		"A sink of 64 shards; medians (min-max) of the runs.\n\n", run.Header, run.CPU, run.End)
	b.WriteString("| a scrape of 64 shards | time | allocations | bytes | goal |\n|---|---:|---:|---:|---|\n")
	for _, r := range scrapeRows {
		v := run.Values[r.bench]
		if len(v["ns/op"]) == 0 {
			return "", fmt.Errorf("no ns/op for %s", r.bench)
		}
		label := r.label
		if strings.Contains(label, "%s") {
			label = fmt.Sprintf(label, fmt.Sprintf("%.0f", benchtxt.Median(v["metrics/op"])))
		}
		goal := ""
		if r.limitUs > 0 {
			goal = fmt.Sprintf("<= %g µs: %s", r.limitUs, metOrMissed(benchtxt.Median(v["ns/op"])/1e3 <= r.limitUs))
		}
		if r.also != "" {
			goal += "; " + r.also
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", label, spread(v["ns/op"], 1e-3, 1, " µs"),
			spread(v["allocs/op"], 1, 0, ""), spread(v["B/op"], 1, 0, ""), goal)
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
	// The runs alternate (bench.sh runs one of each per round), so the
	// rounds pair them: a ratio per round cancels the machine's drift.
	if len(none["ns/op"]) != len(scraped["ns/op"]) {
		return "", fmt.Errorf("BenchmarkPushWhileScraped: %d runs without a collector, %d with", len(none["ns/op"]), len(scraped["ns/op"]))
	}
	ratios := make([]float64, len(none["ns/op"]))
	slower := 0
	for i := range ratios {
		ratios[i] = scraped["ns/op"][i] / none["ns/op"][i]
		if ratios[i] > 1 {
			slower++
		}
	}
	diff := 100 * (benchtxt.Median(ratios) - 1)
	fmt.Fprintf(&b, "\nThe push cost with the collector scraped, against none in the same round: %+.1f %% "+
		"(the median of %d rounds' ratios, %s; scraped slower in %d of them; the goal, within 2 %%: %s).\n",
		diff, len(ratios), ratioRange(ratios), slower, metOrMissed(math.Abs(diff) <= 2))
	return b.String(), nil
}

// ratioRange is the range of ratios as percentages: "-3.1 to +4.0 %".
func ratioRange(ratios []float64) string {
	lo, hi := ratios[0], ratios[0]
	for _, r := range ratios {
		lo, hi = min(lo, r), max(hi, r)
	}
	return fmt.Sprintf("%+.1f to %+.1f %%", 100*(lo-1), 100*(hi-1))
}
