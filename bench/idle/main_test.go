package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/bench/internal/commandtest"
	"github.com/shardedsink/shardedsink/bench/internal/report"
	"github.com/shardedsink/shardedsink/sink"
)

// TestMain runs main itself when the test binary is started as the command
// (runCommand), and otherwise the tests, checking for leaked goroutines.
func TestMain(m *testing.M) {
	commandtest.Main(m, "idle", main)
}

// runCommand runs the test binary as the command and returns its exit code
// and output.
func runCommand(t *testing.T, args string) (int, string) {
	t.Helper()
	return commandtest.Run(t, "idle", args)
}

func TestParseDefaults(t *testing.T) {
	o, err := parse(nil, io.Discard)
	require.NoError(t, err)
	require.NotEmpty(t, o.flags)
	o.flags = nil
	require.Equal(t, options{format: "markdown", duration: 5 * time.Second, samples: 200, mode: sink.IdleWake, trials: 1,
		rowTimeout: 4*5*time.Second + time.Minute}, o)
}

func TestParseFlags(t *testing.T) {
	o, err := parse(strings.Fields("-format json -duration 2s -samples 7 -mode poll -shards 8 -producer busy -trials 3 -o x.json -row-timeout 1m"), io.Discard)
	require.NoError(t, err)
	require.Equal(t, "3", o.flags["trials"])
	o.flags = nil
	require.Equal(t, options{format: "json", duration: 2 * time.Second, samples: 7, mode: sink.IdlePoll, shards: 8, busy: true,
		trials: 3, out: "x.json", rowTimeout: time.Minute}, o)
}

func TestHelpExitsZeroAndAHungTrialFailsLoudly(t *testing.T) {
	code, out := runCommand(t, "-h")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "usage: go run ./bench/idle")

	code, out = runCommand(t, "-duration 2s -row-timeout 50ms")
	require.Equal(t, report.HungExitCode, code, out)
	require.Contains(t, out, "WATCHDOG: trial 1 of 1 did not finish within 50ms")

	code, out = runCommand(t, "-samples 0")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "idle: -samples: must be at least 1, got 0")
}

func TestTrialsGiveMediansBenchfmtAndAFileRewrittenAsTheyFinish(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idle.json")
	require.NoError(t, run(strings.Fields("-format json -duration 20ms -samples 3 -trials 3 -o "+path), io.Discard, io.Discard))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var res Result
	require.NoError(t, json.Unmarshal(data, &res))
	require.True(t, res.Complete)
	require.Len(t, res.Trials, 3)
	var p50 []float64
	for _, tr := range res.Trials {
		p50 = append(p50, tr.PickupP50us)
	}
	slices.Sort(p50)
	require.Equal(t, p50[1], res.PickupP50us, "the top level is the median of the trials")
	require.Equal(t, "3", res.Run.Flags["trials"])
	require.Positive(t, res.Config.Shards)

	var out bytes.Buffer
	require.NoError(t, run(strings.Fields("-format benchfmt -duration 20ms -samples 3 -trials 2 -mode poll -shards 3"), &out, io.Discard))
	var lines []string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "Benchmark") {
			lines = append(lines, l)
		}
	}
	require.Len(t, lines, 2, out.String())
	require.True(t, strings.HasPrefix(lines[0], "BenchmarkIdle/mode=poll/shards=3/producer=block 3 "), lines[0])
	require.Contains(t, lines[0], " idle-cpu-% ")
	require.Contains(t, lines[0], " pickup-p99-ns")
}

func TestParseRejectsBadFlags(t *testing.T) {
	for _, args := range []string{
		"-format svg", "-duration 0s", "-samples 0", "-mode spin", "-shards -1", "-producer lazy", "extra",
		"-trials 0", "-row-timeout -1s",
	} {
		_, err := parse(strings.Fields(args), io.Discard)
		require.Error(t, err, args)
	}
	_, err := parse([]string{"-h"}, io.Discard)
	require.True(t, errors.Is(err, flag.ErrHelp))
}

func TestRunJSONShape(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(strings.Fields("-format json -duration 50ms -samples 5"), &out, io.Discard))
	var got map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	require.Equal(t, []string{"complete", "config", "idle_cpu_pct", "machine", "pickup_p50_us", "pickup_p99_us", "run", "trials"}, keys)
	for _, k := range []string{"idle_cpu_pct", "pickup_p50_us", "pickup_p99_us"} {
		v, ok := got[k].(float64)
		require.True(t, ok, "%s is a number", k)
		require.GreaterOrEqual(t, v, 0.0, k)
	}
	require.Positive(t, got["pickup_p50_us"])
	m, ok := got["machine"].(map[string]any)
	require.True(t, ok)
	require.Contains(t, m, "gomaxprocs")
}

func TestRunMarkdownSmoke(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(strings.Fields("-duration 20ms -samples 3 -mode poll -shards 3 -producer busy"), &out, io.Discard))
	s := out.String()
	require.Contains(t, s, "| idle mode | shards |")
	require.Contains(t, s, "| poll | 3 |")
}

func TestParseTrickleFlags(t *testing.T) {
	o, err := parse(strings.Fields("-rate 1000 -max-delay 100ms"), io.Discard)
	require.NoError(t, err)
	require.Equal(t, 1000, o.rate)
	require.Equal(t, 100*time.Millisecond, o.maxDelay)
	_, err = parse(strings.Fields("-max-delay -1s"), io.Discard)
	require.ErrorContains(t, err, "-max-delay")
	_, err = parse(strings.Fields("-rate -3"), io.Discard)
	require.ErrorContains(t, err, "-rate")
}

// A short trickle with MaxDelay gives far fewer Drain calls than values.
func TestTrickleBatchesWithMaxDelay(t *testing.T) {
	o, err := parse(strings.Fields("-rate 1000 -max-delay 100ms -duration 600ms -shards 1"), io.Discard)
	require.NoError(t, err)
	tr, _, err := measure(o)
	require.NoError(t, err)
	require.Greater(t, tr.MeanBatch, 20.0, "about 100 values per call: %+v", tr)
	require.Less(t, tr.CallsPerSec, 50.0, "about 10 calls a second: %+v", tr)
}

// TestReadmeIsUpToDate renders the idle block from the committed JSON and
// fails when a markdown file of the repository holding the block
// (docs/benchmarks.md) says something else.
func TestReadmeIsUpToDate(t *testing.T) {
	runs, err := readRuns("runs/*.json")
	require.NoError(t, err)
	var want bytes.Buffer
	require.NoError(t, writeReadme(&want, runs))
	files := commandtest.MarkdownWith(t, "../..", "<!-- idle:begin")
	require.NotEmpty(t, files, "no markdown file of the repository holds the idle block")
	for _, f := range files {
		text, err := os.ReadFile(f)
		require.NoError(t, err)
		got, err := report.BlockOf(string(text), readmeBegin, readmeEnd)
		require.NoError(t, err, f)
		require.Equal(t, want.String(), got,
			"%s: the generated idle block differs from bench/idle/runs/*.json; regenerate it with\n"+
				"go run ./bench/idle -from 'bench/idle/runs/*.json' -format readme -o docs/benchmarks.md", f)
	}
}

func TestRunsRenderAsTheReadmeBlock(t *testing.T) {
	dir := t.TempDir()
	idle := filepath.Join(dir, "01-idle.json")
	trickle := filepath.Join(dir, "02-trickle.json")
	code, out := runCommand(t, "-duration 20ms -samples 3 -trials 2 -format json -o "+idle)
	require.Equal(t, 0, code, out)
	code, out = runCommand(t, "-duration 20ms -rate 500 -max-delay 5ms -format json -o "+trickle)
	require.Equal(t, 0, code, out)

	md := filepath.Join(dir, "doc.md")
	require.NoError(t, os.WriteFile(md, []byte("# Doc\n"+readmeBegin+"\nold\n"+readmeEnd+"\nafter\n"), 0o644))
	require.NoError(t, run([]string{"-from", filepath.Join(dir, "*.json"), "-format", "readme", "-o", md}, io.Discard, io.Discard))
	text, err := os.ReadFile(md)
	require.NoError(t, err)
	s := string(text)
	require.Contains(t, s, "| idle mode | shards | producer | max delay | idle CPU (% of one core) | pickup p50 | pickup p99 |")
	require.Contains(t, s, "| wake | ")
	require.Contains(t, s, "| idle mode | shards | max delay | values/s | Drain calls/s | values per call | CPU (% of one core) |")
	require.Contains(t, s, "| 5ms | 500 | ")
	require.Contains(t, s, "medians of 2 trials each")
	require.True(t, strings.HasSuffix(s, readmeEnd+"\nafter\n"), "the text after the block stays")
	require.NotContains(t, s, "\nold\n")

	err = run([]string{"-format", "readme"}, io.Discard, io.Discard)
	require.ErrorContains(t, err, "-format readme: renders earlier runs, so it needs -from")
	err = run([]string{"-from", filepath.Join(dir, "none-*.json")}, io.Discard, io.Discard)
	require.ErrorContains(t, err, "-from: no file matches")
}

func TestQuietIsAccepted(t *testing.T) {
	o, err := parse([]string{"-q"}, io.Discard)
	require.NoError(t, err)
	require.True(t, o.quiet)
}

// TestARepeatedConfigurationIsLabelledAsOne keeps the idle table from
// printing one configuration twice as if it were two: a run that left
// -shards at its default says so, and rows whose resolved configuration is
// the same are named in a note as one configuration measured twice.
func TestARepeatedConfigurationIsLabelledAsOne(t *testing.T) {
	row := func(flag string, cpu float64) Result {
		return Result{
			Run:        report.Run{Flags: map[string]string{"shards": flag}},
			Config:     Config{Mode: "poll", Shards: 8, Producer: "block", MaxDelay: "0s", Trials: 3},
			IdleCPUPct: cpu,
		}
	}
	var b bytes.Buffer
	require.NoError(t, writeReadme(&b, []Result{row("0", 15.23), row("8", 6.37)}))
	s := b.String()
	require.Contains(t, s, "| poll | 8 (default) | block | 0s | 15.23 % |")
	require.Contains(t, s, "| poll | 8 | block | 0s | 6.37 % |")
	require.Contains(t, s, "poll, 8 shards, block producer, max delay 0s (idle CPU 15.23 % and 6.37 %)")

	b.Reset()
	require.NoError(t, writeReadme(&b, []Result{row("0", 15.23)}))
	require.NotContains(t, b.String(), "more than once", "no note without a repeated configuration")
}
