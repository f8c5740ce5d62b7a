package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/bench/internal/report"
)

// TestHeadlineIsUpToDate renders the front page's table from the committed
// JSON and fails when README.md says something else.
func TestHeadlineIsUpToDate(t *testing.T) {
	requireBlockIsRendered(t, "runs/*.json", "../../README.md", headlineBegin, headlineEnd,
		func(w io.Writer, runs []*Result) error {
			last, _ := combined(runs)
			return writeHeadline(w, medianRun(headlineRuns(runs), last), headlineRuns(runs), last)
		},
		"go run ./bench/contended -from 'bench/contended/runs/*.json' -format headline -o README.md")
}

// requireBlockIsRendered renders the runs that glob names with render and
// fails unless file's block between begin and end is exactly that, naming
// the command that regenerates it.
func requireBlockIsRendered(t *testing.T, glob, file, begin, end string, render func(io.Writer, []*Result) error, command string) {
	t.Helper()
	runs, err := readResults(glob)
	require.NoError(t, err)
	var want bytes.Buffer
	require.NoError(t, render(&want, runs))
	text, err := os.ReadFile(file)
	require.NoError(t, err)
	got, err := report.BlockOf(string(text), begin, end)
	require.NoError(t, err, file)
	require.Equal(t, want.String(), got, "%s's block differs from %s; regenerate it with\n%s", file, glob, command)
}

func TestHeadlineHasTheRowsThatWereMeasured(t *testing.T) {
	res := &Result{Config: Config{Producers: []int{1, 64}, Trials: 3, WindowNs: 2e8, Homes: "cpu", Round: 3072}, Rows: []Row{
		{Impl: "sharded-push", Producers: 1, Consumers: "held", PayloadBytes: 8, CoreNsPerOp: 10, ThroughputPerS: 1e8, P99Ns: 30, P999Ns: 90, Valid: true},
		{Impl: "sharded-push", Producers: 64, Consumers: "held", PayloadBytes: 8, CoreNsPerOp: 12, ThroughputPerS: 50e6, P99Ns: 40, P999Ns: 100, Valid: true},
		{Impl: "single-chan", Producers: 64, Consumers: "held", PayloadBytes: 8, CoreNsPerOp: 100, ThroughputPerS: 20e6, P99Ns: 2000, P999Ns: 3000, Parallelism: 1.2},
		{Impl: "single-chan", Producers: 64, Consumers: "draining", PayloadBytes: 8, CoreNsPerOp: 999, ThroughputPerS: 1, Valid: true},
	}}
	tables := &Result{Rows: []Row{
		{Impl: "sharded-push-defaults", Producers: 1, Consumers: "draining", PayloadBytes: 8, CoreNsPerOp: 25, Valid: true},
		{Impl: "sharded-push-defaults", Producers: 64, Consumers: "draining", PayloadBytes: 8, CoreNsPerOp: 60, ThroughputPerS: 20e6, P99Ns: 5000, DropPct: 12.5, Valid: true},
	}}
	var b bytes.Buffer
	other := &Result{Rows: []Row{
		{Impl: "sharded-push", Producers: 1, Consumers: "held", PayloadBytes: 8, CoreNsPerOp: 8, Valid: true},
		{Impl: "sharded-push", Producers: 64, Consumers: "held", PayloadBytes: 8, CoreNsPerOp: 15, Valid: true},
	}}
	faster := &Result{Rows: []Row{
		{Impl: "sharded-push", Producers: 1, Consumers: "held", PayloadBytes: 8, CoreNsPerOp: 9, Valid: true},
		{Impl: "sharded-push", Producers: 64, Consumers: "held", PayloadBytes: 8, CoreNsPerOp: 11, Valid: true},
	}}
	runs := []*Result{other, res, faster}
	require.Same(t, res, medianRun(runs, nil), "the run of median sink cell at 64 producers: 11, 12, 15")
	require.Same(t, faster, medianRun([]*Result{other, faster}, nil), "of two, the lower")
	require.NoError(t, writeHeadline(&b, medianRun(runs, nil), runs, res))
	require.NotContains(t, b.String(), "‡", "no defaults row in the runs: no mark, no sentence")
	// The caption is wrapped for the front page: read it as one line.
	caption := func(s string) string {
		c := strings.SplitN(s, "\n\n", 2)[0]
		for _, l := range strings.Split(c, "\n") {
			require.LessOrEqual(t, len(l), report.FrontPageWidth, "the caption is wrapped: %q", l)
		}
		return strings.ReplaceAll(c, "\n", " ")
	}
	require.Equal(t, 2, strings.Count(caption(b.String()), ". "), "a caption of three sentences")
	b.Reset()
	require.NoError(t, writeHeadline(&b, medianRun(runs, nil), runs, tables))
	s := b.String()
	c := caption(s)
	require.Contains(t, c, "64 producers, each on its own OS thread")
	require.Contains(t, c, "medians of 3 trials of a 200ms window")
	require.Contains(t, c, "Sink.Push on the ring of the CPU it ran on (RDPID)")
	require.Contains(t, c, "The median of 3 runs by the sink's cell", "the table is one run's, and says which")
	require.Contains(t, c, "the sink's cells ranged 11.0-15.0 at 64 producers, 8.00-10.0 at 1",
		"the spread of the sink's cells over the runs, beside the one run shown")
	require.Contains(t, c, "hold a whole round (5,120 slots), nobody draining", "the rings' size as the rows ran")
	require.Contains(t, c, "‡: every default (8,192-slot rings), workers draining", "the defaults row says how it ran")
	require.Equal(t, 2, strings.Count(c, ". "), "a caption of three sentences")
	require.Contains(t, s, "| **sink** (`Sink.Push`, default Config but ring size) | 50.0 M | 12.0 | 40.0 ns | 0 | 10.0 |\n"+
		"| **sink**, every default, draining ‡ | 20.0 M | 60.0 | 5.00 µs | 12.5 | 25.0 |",
		"the defaults row, from the draining table, after the sink's held one")
	require.Contains(t, s, "| a buffered channel, `select`-`default` † | 20.0 M | 100 | 2.00 µs | 0 |  |",
		"the held table only; a row without a 1-producer cell leaves it empty; a row whose producers took turns is marked")
	require.NotContains(t, s, "invalid", "no cell of the front page is marked")
	require.NotContains(t, s, "lscq", "rows not measured are left out")

	b.Reset()
	require.NoError(t, writeSummary(&b, res))
	require.Contains(t, b.String(), "| **sink** (`Sink.Push`, default Config but ring size) | 50.0 M | 12.0 |")
	require.Contains(t, b.String(), "Goals:")
	require.Contains(t, b.String(), "-format markdown", "the summary says where the full grid is")
	require.Error(t, writeHeadline(&b, &Result{Config: Config{Producers: []int{1}}}, nil, &Result{}))
}

// TestManyCoreBlockIsUpToDate renders the table of the run on a machine of
// more cores from its committed JSON and fails when docs/benchmarks.md says
// something else.
func TestManyCoreBlockIsUpToDate(t *testing.T) {
	requireBlockIsRendered(t, "runs-16core/*.json", "../../docs/benchmarks.md", manyCoreBegin, manyCoreEnd,
		func(w io.Writer, runs []*Result) error {
			last, _ := combined(runs)
			return writeManyCore(w, last)
		},
		"go run ./bench/contended -from 'bench/contended/runs-16core/*.json' -format manycore -o docs/benchmarks.md")
}
