package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/bench/internal/report"
)

// TestHeadlineIsUpToDate renders the front page's table from the committed
// JSON and fails when README.md says something else.
func TestHeadlineIsUpToDate(t *testing.T) {
	runs, err := readResults("runs/*.json")
	require.NoError(t, err)
	var want bytes.Buffer
	require.NoError(t, writeHeadline(&want, runs[len(runs)-1]))
	text, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	got, err := report.BlockOf(string(text), headlineBegin, headlineEnd)
	require.NoError(t, err, "README.md")
	require.Equal(t, want.String(), got,
		"README.md's headline table differs from bench/contended/runs/*.json; regenerate it with\n"+
			"go run ./bench/contended -from 'bench/contended/runs/*.json' -format headline -o README.md")
}

func TestHeadlineHasTheRowsThatWereMeasured(t *testing.T) {
	res := &Result{Config: Config{Producers: []int{1, 64}, Trials: 3, WindowNs: 2e8}, Rows: []Row{
		{Impl: "sharded-push", Producers: 1, Consumers: "held", PayloadBytes: 8, CPUNsPerOp: 10, ThroughputPerS: 1e6, Valid: true},
		{Impl: "sharded-push", Producers: 64, Consumers: "held", PayloadBytes: 8, CPUNsPerOp: 12, ThroughputPerS: 50e6, Valid: true},
		{Impl: "single-chan", Producers: 64, Consumers: "held", PayloadBytes: 8, CPUNsPerOp: 40, ThroughputPerS: 20e6, Parallelism: 1.2, Overlap: 0.99},
		{Impl: "single-chan", Producers: 64, Consumers: "draining", PayloadBytes: 8, CPUNsPerOp: 99, ThroughputPerS: 1, Valid: true},
	}}
	var b bytes.Buffer
	require.NoError(t, writeHeadline(&b, res))
	s := b.String()
	require.Contains(t, s, "a 200ms window per trial")
	require.Contains(t, s, "| sharded-push | 10.0 | 12.0 | 50.0 M |")
	require.Contains(t, s, "| single-chan |  | 40.0 (invalid: parallel 1.20, overlap 0.99) | 20.0 M |", "an invalid cell says so")
	require.False(t, strings.Contains(s, "lscq"), "rows not measured are left out")
	require.Error(t, writeHeadline(&b, &Result{Config: Config{Producers: []int{1}}}))
}
