package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardedsink/shardedsink/bench/internal/commandtest"
	"github.com/shardedsink/shardedsink/bench/internal/report"
)

// TestMain runs main itself when the test binary is started as the command
// (runCommand), and otherwise the tests, checking for leaked goroutines
// (zenq's queues each start one that nothing can stop).
func TestMain(m *testing.M) {
	commandtest.Main(m, "channels", main, goleak.IgnoreAnyFunction("github.com/alphadose/zenq/v2.(*ZenQ[...]).selectSender"))
}

// BenchmarkChannels runs the rows of the table as go test benchmarks, so
// that benchstat can compare implementations and revisions:
//
//	go test -run '^$' -bench . -count 10 ./bench/channels/ > new.txt
//	benchstat -col /impl new.txt
//
// A single-goroutine row's op is one send+recv (or one burst of 1024
// try-sends and 1024 try-recvs); a crew row's op is a whole run of
// benchItems messages per sender, also reported as ns/msg.
func BenchmarkChannels(b *testing.B) {
	const benchItems = 10000
	for _, r := range rows {
		for _, impl := range impls() {
			b.Run("case="+r.name+"/impl="+impl, func(b *testing.B) {
				b.ReportAllocs()
				if r.single != nil {
					if !singleSupported(impl, r.name) {
						b.Skip("not supported")
					}
					// b.N ops in one timed call.
					items := b.N
					if strings.HasPrefix(r.name, "burst") { // one op is one burst
						items = b.N * burst
					}
					b.ResetTimer()
					r.single(impl, items)
					return
				}
				var total float64
				for b.Loop() {
					ns, ok := r.run(impl, benchItems)
					if !ok {
						b.Skip("not supported")
					}
					total += ns
				}
				if r.unit != "msg" {
					b.ReportMetric(total/float64(b.N)/float64(r.senders*benchItems), "ns/msg")
				}
			})
		}
	}
}

func TestJSONHasTheAgreedShape(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run([]string{"-format", "json", "-trials", "2", "-items", "64", "-q"}, &out, io.Discard))

	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc))
	require.ElementsMatch(t, []string{"machine", "run", "config", "rows", "complete"}, slices.Collect(maps.Keys(doc)))

	var machine map[string]any
	require.NoError(t, json.Unmarshal(doc["machine"], &machine))
	for _, k := range []string{"cpu", "cores", "gomaxprocs", "go_version", "os", "arch", "kernel", "transparent_hugepages"} {
		require.Contains(t, machine, k)
	}
	var runDoc map[string]any
	require.NoError(t, json.Unmarshal(doc["run"], &runDoc))
	for _, k := range []string{"machine", "command", "load_before", "load_after", "gogc", "gomaxprocs_env", "flags"} {
		require.Contains(t, runDoc, k)
	}
	require.Equal(t, "2", runDoc["flags"].(map[string]any)["trials"])
	require.Equal(t, "true", string(doc["complete"]))

	var results []map[string]any
	require.NoError(t, json.Unmarshal(doc["rows"], &results))
	seen := map[string]map[string]bool{}
	for _, r := range results {
		require.ElementsMatch(t, []string{"case", "impl", "ns", "unit", "trials_ns"}, slices.Collect(maps.Keys(r)), "%v", r)
		name, ok := r["case"].(string)
		require.True(t, ok, "case is a string: %v", r)
		impl, ok := r["impl"].(string)
		require.True(t, ok, "impl is a string: %v", r)
		require.Contains(t, []string{"mpmc", "chan", "zenq"}, impl)
		ns, ok := r["ns"].(float64)
		require.True(t, ok, "ns is a number: %v", r)
		require.Greater(t, ns, 0.0)
		require.Len(t, r["trials_ns"], 2)
		require.Contains(t, []string{"op", "round", "run", "msg"}, r["unit"])
		if seen[name] == nil {
			seen[name] = map[string]bool{}
		}
		seen[name][impl] = true
	}
	require.Len(t, seen, len(rows), "every case is measured")
	for name, impls := range seen {
		require.True(t, impls["mpmc"] && impls["chan"], "case %s has mpmc and chan", name)
	}
}

func TestBenchfmtHasOneLinePerTrial(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run([]string{"-format", "benchfmt", "-trials", "3", "-items", "32", "-run", "^ping-bounded1$|^spsc-goroutines", "-q"}, &out, io.Discard))
	var lines []string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "Benchmark") {
			lines = append(lines, l)
		}
	}
	require.Len(t, lines, 2*3*len(impls()), out.String())
	require.Contains(t, out.String(), "BenchmarkChannels/case=ping-bounded1/impl=mpmc 1 ")
	require.Contains(t, out.String(), " ns/op\n")
	require.Contains(t, out.String(), " ns/msg\n")
	require.True(t, strings.HasPrefix(out.String(), "goos: "))
}

func TestProgressAndOutputFileAsCasesFinish(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.json")
	var progress bytes.Buffer
	opts, err := parse([]string{"-format", "json", "-trials", "1", "-items", "16", "-run", "^ping|^burst", "-o", path}, io.Discard)
	require.NoError(t, err)
	stop := errors.New("a late case failed")
	calls := 0
	err = measure(opts, &report.Watchdog{}, &progress, func(rows []Result) error {
		calls++
		if err := emit(Output{Rows: rows}, opts, io.Discard); err != nil {
			return err
		}
		if calls == 3 {
			return stop
		}
		return nil
	})
	require.ErrorIs(t, err, stop)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc Output
	require.NoError(t, json.Unmarshal(data, &doc))
	require.False(t, doc.Complete)
	cases := map[string]bool{}
	for _, r := range doc.Rows {
		cases[r.Case] = true
	}
	require.Equal(t, map[string]bool{"ping-bounded1": true, "ping-unbounded": true, "burst-bounded1024": true}, cases,
		"the three cases finished before the failure are in the file")
	require.Equal(t, 3, strings.Count(progress.String(), "\n"), progress.String())
	require.Contains(t, progress.String(), "ping-bounded1")
}

func TestHelpExitsZeroAndAHungCaseFailsLoudly(t *testing.T) {
	code, out := runCommand(t, "-h")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "usage: go run ./bench/channels")

	code, out = runCommand(t, "-row-timeout 1ms -items 1000000 -trials 50 -run ^mpmc-4x4-goroutines")
	require.Equal(t, report.HungExitCode, code, out)
	require.Contains(t, out, "WATCHDOG: case mpmc-4x4-goroutines-cap16 did not finish within 1ms")

	code, out = runCommand(t, "-trials 0")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "channels: -trials: must be at least 1, got 0")
}

// runCommand runs the test binary as the command (see TestMain) and returns
// its exit code and output.
func runCommand(t *testing.T, args string) (int, string) {
	t.Helper()
	return commandtest.Run(t, "channels", args)
}

func TestMarkdownSmokeRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run([]string{"-trials", "1", "-items", "32"}, &out, io.Discard))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// machine line, blank line, header, separator, one line per case.
	require.Len(t, lines, 4+len(rows), out.String())
	require.True(t, strings.HasPrefix(lines[2], "| case | what is timed | mpmc | chan | mpmc/chan |"), lines[2])
	for _, r := range rows {
		require.Contains(t, out.String(), "| "+r.name+" |")
	}
}

func TestBadFlagsAreErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-format", "svg"},
		{"-trials", "0"},
		{"-items", "0"},
		{"-run", "("},
		{"-format", "readme"},
		{"-row-timeout", "-1s"},
		{"extra"},
	} {
		var out bytes.Buffer
		require.Error(t, run(args, &out, &out), "args %v", args)
	}
}
