package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardedsink/shardedsink/bench/internal/report"

	"github.com/shardedsink/shardedsink/bench/internal/commandtest"
	"github.com/shardedsink/shardedsink/bench/internal/doccheck"
	"github.com/shardedsink/shardedsink/ring/vyukov"
	"github.com/shardedsink/shardedsink/sink"
)

// TestMain runs main itself when the test binary is started as the
// command (see runCommand), and otherwise the tests, checking for leaked
// goroutines. zenq's queues start a goroutine each that nothing can stop.
func TestMain(m *testing.M) {
	commandtest.Main(m, "contended", main, goleak.IgnoreAnyFunction("github.com/alphadose/zenq/v2.(*ZenQ[...]).selectSender"),
		goleak.IgnoreTopFunction("github.com/alphadose/zenq/v2.(*ZenQ[...]).selectSender"))
}

// runCommand runs the test binary as the command and returns its exit code
// and output.
func runCommand(t *testing.T, args string) (int, string) {
	t.Helper()
	return commandtest.Run(t, "contended", args)
}

// wantImpls is the table's row families, in order, as the JSON names them.
func wantImpls() []string {
	names := []string{"sharded-push", "sharded-vyukov", "sharded-mutex", "sharded-chanring"}
	if buildFlags != "" { // the zenq build
		names = append(names, "sharded-zenq")
	}
	return append(names, "sharded-notify", "sharded-default", "sharded-push-defaults", "unsharded-vyukov", "single-vyukov", "single-mutex", "single-chan",
		"xsync", "workiva", "diodes", "lscq")
}

// drainingOnly are the rows measured with consumers draining only.
var drainingOnly = []string{"sharded-push-defaults"}

// heldImpls is wantImpls without drainingOnly: the rows of a held table.
func heldImpls() []string {
	return slices.DeleteFunc(wantImpls(), func(s string) bool { return slices.Contains(drainingOnly, s) })
}

func TestImplNames(t *testing.T) {
	require.Equal(t, wantImpls(), implNames())
	require.Equal(t, wantImpls(), implNamesOf(impls[Event]()), "both payloads have the same rows")
}

func implNamesOf[T any](all []*impl[T]) []string {
	var out []string
	for _, im := range all {
		out = append(out, im.name)
	}
	return out
}

func TestSelectNames(t *testing.T) {
	t.Run("it keeps table order", func(t *testing.T) {
		got, err := selectNames("lscq, sharded-vyukov")
		require.NoError(t, err)
		require.Equal(t, []string{"sharded-vyukov", "lscq"}, got)
	})
	t.Run("it rejects unknown names", func(t *testing.T) {
		_, err := selectNames("sharded-vyukov,nope")
		require.ErrorContains(t, err, `"nope"`)
	})
	t.Run("an empty list selects everything", func(t *testing.T) {
		got, err := selectNames("")
		require.NoError(t, err)
		require.Equal(t, wantImpls(), got)
	})
}

func TestFlags(t *testing.T) {
	t.Run("-h prints every flag and exits 0", func(t *testing.T) {
		var stderr bytes.Buffer
		err := run([]string{"-h"}, io.Discard, &stderr)
		require.True(t, errors.Is(err, flag.ErrHelp))
		for _, f := range []string{"-producers", "-window", "-round", "-trials", "-shards", "-impls", "-consumers", "-payload", "-format",
			"-o", "-shed", "-idle", "-from", "-q", "-row-timeout", "-tables"} {
			require.Regexp(t, `\n  `+f+`[ \n\t]`, stderr.String(), "flag %s", f)
		}
		code, out := runCommand(t, "-h")
		require.Equal(t, 0, code, out)
		require.Contains(t, out, "Usage: go run ./bench/contended")
	})
	t.Run("bad values are errors that name the flag and the value", func(t *testing.T) {
		for args, want := range map[string]string{
			"-producers 1,x":     `-producers: "x"`,
			"-producers 0":       `-producers: "0"`,
			"-window 10us":       "-window: need at least 1ms, got 10µs",
			"-round 100":         "-round: need at least 1024 pushes (one chunk), got 100",
			"-trials 0":          "-trials: need at least 1, got 0",
			"-shards 0":          "-shards: need at least 1, got 0",
			"-format csv":        `-format: unknown format "csv"`,
			"-idle spin":         `"spin"`,
			"-impls bogus":       `"bogus"`,
			"-consumers lazy":    `-consumers: unknown mode "lazy"`,
			"-payload 16":        "-payload: 16 bytes is not offered",
			"-row-timeout -1s":   "-row-timeout: must not be negative, got -1s",
			"-from /nonexistent": `-from: no file matches "/nonexistent"`,
			"-tables held/16":    `-tables: "held/16" is not consumers/payload`,
			"-tables lazy/8":     `-tables: "lazy/8"`,
		} {
			err := run(strings.Fields(args), io.Discard, io.Discard)
			require.ErrorContains(t, err, want, args)
		}
		code, out := runCommand(t, "-payload 16")
		require.Equal(t, 2, code)
		require.Contains(t, out, "contended: -payload: 16 bytes is not offered")
	})
	t.Run("a hung row fails the run loudly", func(t *testing.T) {
		code, out := runCommand(t, "-row-timeout 1ms -impls diodes -producers 64 -tables held/32 -q")
		require.Equal(t, 3, code, out)
		require.Contains(t, out, "WATCHDOG: row diodes, 64 producers, consumers held, 32-byte payload did not finish within 1ms")
		require.Contains(t, out, "goroutine ")
	})
	t.Run("-idle chooses the sink rows' idle mode, sharded-default keeps its default", func(t *testing.T) {
		defer func() { sinkIdle = sink.IdlePoll }()
		o, err := parseFlags(strings.Fields("-idle wake"), io.Discard)
		require.NoError(t, err)
		require.Equal(t, sink.IdleWake, o.idle)
		sinkIdle = o.idle
		row, err := newSinkRow[uint64]("x", 2, 10, vyukov.Factory[uint64], draining, false)
		require.NoError(t, err)
		cfg := row.config()
		require.Equal(t, sink.IdleWake, cfg.Idle)
		require.Zero(t, cfg.IdleSleep, "the sink's default recheck")
		sinkIdle = sink.IdlePoll
		cfg = row.config()
		require.Equal(t, sink.IdlePoll, cfg.Idle)
		require.Equal(t, idleSleep, cfg.IdleSleep)
		def, err := newSinkRow[uint64]("d", 2, 10, vyukov.Factory[uint64], draining, true)
		require.NoError(t, err)
		require.Equal(t, sink.IdleWake, def.config().Idle, "the zero value: the sink's default")
		require.False(t, def.config().DisableStealing)
		require.Zero(t, def.config().Shards, "the default shard count")
	})
	t.Run("lists give several tables, once each", func(t *testing.T) {
		o, err := parseFlags(strings.Fields("-consumers held,draining,held -payload 32,8"), io.Discard)
		require.NoError(t, err)
		require.Equal(t, []consumerMode{held, draining}, o.consumers)
		require.Equal(t, []int{32, 8}, o.payloads)
		require.Equal(t, "held,draining,held", o.flags["consumers"])
		require.Equal(t, "3", o.flags["trials"], "every flag is recorded, set or not")
		require.Equal(t, []tableKey{{"held", 32}, {"held", 8}, {"draining", 32}, {"draining", 8}}, o.tables)

		o, err = parseFlags(strings.Fields("-tables held/8,held/32,draining/8,held/8"), io.Discard)
		require.NoError(t, err)
		require.Equal(t, []tableKey{{"held", 8}, {"held", 32}, {"draining", 8}}, o.tables)
		require.Equal(t, []consumerMode{held, draining}, o.consumers)
		require.Equal(t, []int{8, 32}, o.payloads)
	})
}

// smoke runs the whole harness once with tiny counts and keeps its JSON.
var smoke struct {
	out []byte
	err error
	ran bool
}

const smokeArgs = "-window 2ms -round 4096 -producers 1,4 -trials 2 -consumers held,draining -payload 8,32 -format json -q"

func smokeRun(t *testing.T) []byte {
	t.Helper()
	if !smoke.ran {
		smoke.ran = true
		var out bytes.Buffer
		smoke.err = run(strings.Fields(smokeArgs), &out, io.Discard)
		smoke.out = out.Bytes()
	}
	require.NoError(t, smoke.err)
	return smoke.out
}

func smokeResult(t *testing.T) *Result {
	var res Result
	require.NoError(t, json.Unmarshal(smokeRun(t), &res))
	return &res
}

func TestSmokeRun(t *testing.T) {
	res := smokeResult(t)
	require.True(t, res.Complete)
	// Two payloads and two producer counts, held and draining; the
	// draining-only rows once.
	require.Len(t, res.Rows, 2*2*(len(heldImpls())+len(wantImpls())))
	require.Equal(t, []tableKey{{"held", 8}, {"held", 32}, {"draining", 8}, {"draining", 32}}, tables(res))
	for _, r := range res.Rows {
		name := r.Impl + "/" + r.Consumers
		require.Len(t, r.CPUNsTrials, 2, name)
		require.Positive(t, r.CPUNsPerOp, name)
		require.Positive(t, r.ProcCPUNsPerOp, name)
		require.Positive(t, r.ThroughputPerS, name)
		require.Len(t, r.ParallelismTrials, 2, name)
		require.Equal(t, r.Parallelism >= r.ParallelismFloor, r.Valid, name)
		require.Equal(t, 4096, r.Round, name)
		require.LessOrEqual(t, r.P99Ns, r.P999Ns)
		require.LessOrEqual(t, r.P999Ns, r.MaxNs)
		if r.Consumers == "held" {
			require.Zero(t, r.ConsumedPct, "%s: held rows pop nothing during a trial", name)
		}
		if r.Impl == "xsync" || r.Impl == "workiva" {
			continue // they give up on a lost CAS: contention shows up as drops
		}
		require.Zero(t, r.DropPct, "%s@%d dropped on the accept path", name, r.Producers)
	}
	require.NotEmpty(t, res.ShedRows)
	for _, r := range res.ShedRows {
		require.Equal(t, 100.0, r.RejectedPct, "shed %s@%d", r.Impl, r.Producers)
		require.Positive(t, r.CPUNsPerOp)
		require.Equal(t, 8, r.PayloadBytes, "shed rows use the first payload")
	}
}

func TestJSONDescribesItsRun(t *testing.T) {
	var doc map[string]any
	require.NoError(t, json.Unmarshal(smokeRun(t), &doc))
	require.ElementsMatch(t, []string{"run", "config", "rows", "shed_rows", "caveats", "complete"}, slices.Collect(maps.Keys(doc)))

	run := doc["run"].(map[string]any)
	for _, k := range []string{"machine", "command", "load_before", "load_after", "gogc", "gomaxprocs_env", "flags"} {
		require.Contains(t, run, k)
	}
	machine := run["machine"].(map[string]any)
	for _, k := range []string{"cpu", "cores", "gomaxprocs", "go_version", "kernel", "transparent_hugepages"} {
		require.Contains(t, machine, k)
	}
	flags := run["flags"].(map[string]any)
	require.Equal(t, "held,draining", flags["consumers"])
	require.Equal(t, "8,32", flags["payload"])
	require.Equal(t, "poll", flags["idle"])
	require.Contains(t, run["command"], "./bench/contended "+smokeArgs)

	config := doc["config"].(map[string]any)
	require.Equal(t, []any{"held", "draining"}, config["consumers"])
	require.Equal(t, []any{8.0, 32.0}, config["payloads"])
	require.Equal(t, []any{"held/8", "held/32", "draining/8", "draining/32"}, config["tables"])
	require.EqualValues(t, 2, config["trials"])
	require.EqualValues(t, 2e6, config["window_ns"])
	require.EqualValues(t, 4096, config["round"])
	require.Contains(t, []any{"cpu", "stack"}, config["homes"])

	rowKeys := []string{"impl", "producers", "consumers", "payload_bytes", "round", "rounds", "cpu_ns_per_op", "cpu_ns_min", "cpu_ns_max",
		"cpu_ns_trials", "proc_cpu_ns_per_op", "proc_cpu_ns_trials", "drop_pct", "throughput_per_s", "throughput_trials", "pushes_trials",
		"core_ns_per_op", "core_ns_min", "core_ns_max", "core_ns_trials", "p99_ns", "p999_ns", "max_ns", "parallelism", "parallelism_trials", "parallelism_floor", "valid", "overlap", "scheduler", "counters", "consumed_pct"}
	var impls []string
	for _, r := range doc["rows"].([]any) {
		row := r.(map[string]any)
		require.ElementsMatch(t, rowKeys, slices.Collect(maps.Keys(row)))
		require.ElementsMatch(t, []string{"gc_cycles", "minor_faults", "ctx_switches", "consumed"},
			slices.Collect(maps.Keys(row["counters"].(map[string]any))))
		if !slices.Contains(impls, row["impl"].(string)) {
			impls = append(impls, row["impl"].(string))
		}
	}
	require.Equal(t, append(heldImpls(), drainingOnly...), impls, "the held table's rows first, then the draining-only ones")

	caveats := doc["caveats"].(map[string]any)
	for _, k := range []string{"sharded-push", "sharded-notify", "sharded-default", "single-chan", "xsync", "workiva", "diodes", "lscq"} {
		require.NotEmpty(t, caveats[k], "caveat of %s", k)
	}
}

func TestFormatsFromJSON(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run-1.json")
	require.NoError(t, os.WriteFile(path, smokeRun(t), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run-2.json"), smokeRun(t), 0o644))

	t.Run("markdown", func(t *testing.T) {
		var md bytes.Buffer
		require.NoError(t, run([]string{"-from", path, "-format", "markdown"}, &md, io.Discard))
		s := md.String()
		require.True(t, strings.HasPrefix(s, "# Contended accept path"), s)
		require.Contains(t, s, "\nMachine: ")
		require.Contains(t, s, "./bench/contended "+smokeArgs+"`")
		require.Contains(t, s, "### Accept path, consumers held, 8-byte payload")
		require.Contains(t, s, "### Accept path, consumers draining, 32-byte payload")
		require.Contains(t, s, "| impl | producers | core-ns/op | min | max | cpu ns/op | min | max | proc ns/op | drop % | throughput/s | p99 | p99.9 | max | parallel | rounds | GCs | faults | switches | consumed % |")
		require.Contains(t, s, "| impl | producers | cpu ns/op | min | max | rejected % | parallel |")
		require.Contains(t, s, "- **sharded-notify**: ")
		require.NotContains(t, s, "### Stability", "one run has no stability table")
	})
	t.Run("summary, the default", func(t *testing.T) {
		var out bytes.Buffer
		require.NoError(t, run([]string{"-from", path}, &out, io.Discard))
		s := out.String()
		require.Contains(t, s, "| at 4 producers | pushes/s | core-ns per push | p99 | drop % | core-ns at 1 producer |")
		require.Contains(t, s, "| **sink** (`Sink.Push`, default Config but ring size)")
		require.Less(t, strings.Count(s, "\n"), 30, "a short summary, not the grid:\n%s", s)
	})
	t.Run("benchfmt has one line per trial", func(t *testing.T) {
		var out bytes.Buffer
		require.NoError(t, run([]string{"-from", filepath.Join(dir, "run-*.json"), "-format", "benchfmt"}, &out, io.Discard))
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		var results int
		for _, l := range lines {
			if strings.HasPrefix(l, "Benchmark") {
				results++
				f := strings.Fields(l)
				require.Equal(t, 0, (len(f)-2)%2, "name, iterations, then value-unit pairs: %q", l)
			}
		}
		res := smokeResult(t)
		want := 0
		for _, r := range res.Rows {
			want += len(r.CPUNsTrials)
		}
		for _, r := range res.ShedRows {
			want += len(r.CPUNsTrials)
		}
		require.Equal(t, 2*want, results, "one line per trial of each of the two runs")
		require.Regexp(t, `\nBenchmarkContended/consumers=held/payload=8/impl=sharded-vyukov/producers=4(/valid=no)? [1-9][0-9]* [0-9.]+ cpu-ns/op [0-9.]+ core-ns/op [0-9.]+ proc-cpu-ns/op [0-9.e+]+ pushes/s [0-9.]+ parallel\n`, out.String())
		require.Contains(t, out.String(), "goos: ")
	})
	t.Run("readme, with the stability of two runs", func(t *testing.T) {
		var out bytes.Buffer
		require.NoError(t, run([]string{"-from", filepath.Join(dir, "run-*.json"), "-format", "readme"}, &out, io.Discard))
		s := out.String()
		require.Contains(t, s, "**Core-ns per accepted push, consumers held, 8-byte payload (the headline")
		require.Contains(t, s, "**Per-thread CPU ns per accepted push, consumers held, 8-byte payload** (the original's metric)")
		require.Contains(t, s, "### Stability: sharded-push over 2 runs")
		require.Contains(t, s, "| 4 | ")
		require.NotContains(t, s, readmeBegin, "the markers stay in the file")
	})
	t.Run("svg", func(t *testing.T) {
		svg := filepath.Join(dir, "chart.svg")
		require.NoError(t, run([]string{"-from", path, "-format", "svg", "-o", svg}, io.Discard, io.Discard))
		doc, err := os.ReadFile(svg)
		require.NoError(t, err)
		lines, groups := svgCount(t, doc)
		require.Equal(t, len(heldImpls()), lines, "the headline (held) table's rows")
		require.Equal(t, heldImpls(), groups)
	})
}

func TestOutputIsWrittenAsRowsFinish(t *testing.T) {
	path := filepath.Join(t.TempDir(), "partial.json")
	o, err := parseFlags(strings.Fields("-window 1ms -round 2048 -producers 1 -trials 1 -impls sharded-vyukov,single-vyukov,lscq -format json -o "+path), io.Discard)
	require.NoError(t, err)
	stop := errors.New("the run failed late")
	calls := 0
	_, err = measureAll(o, nil, io.Discard, func(partial *Result) error {
		calls++
		if err := emit(o, []*Result{partial}, io.Discard); err != nil {
			return err
		}
		if calls == 2 {
			return stop
		}
		return nil
	})
	require.ErrorIs(t, err, stop)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var res Result
	require.NoError(t, json.Unmarshal(data, &res))
	require.False(t, res.Complete)
	require.Len(t, res.Rows, 2, "the rows measured before the failure are in the file")
	var md bytes.Buffer
	require.NoError(t, writeMarkdown(&md, []*Result{&res}))
	require.Contains(t, md.String(), "incomplete")
}

func TestGoalsAndStability(t *testing.T) {
	// Each row's core-ns per push and p99; throughput follows from core-ns
	// (2 cores), as it does in a run.
	type cell struct{ core, p99 float64 }
	mk := func(c map[string]cell) *Result {
		res := &Result{Config: Config{Producers: []int{1, 4, 64, 256}}}
		for key, v := range c {
			impl, ps, _ := strings.Cut(key, "@")
			p, _ := strconv.Atoi(ps)
			res.Rows = append(res.Rows, Row{Impl: impl, Producers: p, Consumers: "held", PayloadBytes: 8,
				CPUNsPerOp: v.core, CoreNsPerOp: v.core, ThroughputPerS: float64(min(p, 2)) * 1e9 / v.core, P99Ns: v.p99, Valid: true})
			if impl == "xsync" {
				res.Rows[len(res.Rows)-1].DropPct = 20 // it gives up on lost races
			}
		}
		slices.SortFunc(res.Rows, func(a, b Row) int {
			return strings.Compare(fmt.Sprint(a.Impl, a.Producers), fmt.Sprint(b.Impl, b.Producers))
		})
		return res
	}
	good := map[string]cell{
		"sharded-push@1": {10, 30}, "sharded-push@4": {12, 40}, "sharded-push@64": {12, 50}, "sharded-push@256": {13, 50},
		"sharded-default@1": {9, 30}, "sharded-vyukov@64": {11, 40}, "sharded-notify@64": {45, 400},
		"single-vyukov@64": {25, 600}, "single-vyukov@256": {26, 600}, "single-chan@64": {130, 2000},
		"single-mutex@64": {56, 130}, "single-mutex@256": {60, 140}, "xsync@64": {5, 10}, // xsync drops: no rival
	}
	res := mk(good)
	res.Rows = append(res.Rows, Row{Impl: "xsync", Producers: 1, Consumers: "held", PayloadBytes: 8, CPUNsPerOp: 1})
	goals := checkGoals([]*Result{res})
	require.Len(t, goals, 10, "%q", goals)
	for _, g := range goals {
		require.True(t, strings.HasSuffix(g, ": met"), g)
	}
	require.Contains(t, goals[0], "at 64 producers sharded-push (167 M/s, 12.0 core-ns, p99 50.0 ns) has the highest pushes/s")
	require.Contains(t, goals[0], "of the 3 rival rows with drop % 0", "sink configurations and rows that drop are no rivals")
	require.Contains(t, goals[1], "p99 is 0.08x one shared vyukov ring's")
	require.Contains(t, goals[4], "costs 1.08x its core-ns per push at 4")

	bad := map[string]cell{}
	for k, v := range good {
		bad[k] = v
	}
	bad["sharded-push@64"] = cell{60, 300}   // slower than single-vyukov, tail above a third of its
	bad["sharded-push@256"] = cell{20, 50}   // 1.54x its cost at 4
	bad["sharded-default@1"] = cell{7, 30}   // the handle push 1.43x cheaper
	bad["sharded-notify@64"] = cell{20, 400} // notify only 1.82x the plain sink
	bad["single-mutex@256"] = cell{12.5, 45} // beats the sink at 256 in core-ns and p99
	goals = checkGoals([]*Result{mk(good), mk(bad)})
	var missed []string
	for _, g := range goals {
		if strings.HasSuffix(g, ": **missed**") {
			missed = append(missed, g)
		}
	}
	// lead@64, p99@64, lead@256, 256 vs 4, mutex, handle, notify, spread
	// (the channel still moves 2.17x less)
	require.Len(t, missed, 8, "%q", goals)
	require.Contains(t, missed[0], "matched or beaten by single-mutex (pushes/s 35.7 M, core-ns 56.0, p99 130 ns); single-vyukov (pushes/s 80.0 M, core-ns 25.0)")
	require.Contains(t, missed[2], "matched or beaten by single-mutex (pushes/s 160 M, core-ns 12.5, p99 45.0 ns)")
	worst, at := spreadOf([]*Result{mk(good), mk(bad)})
	require.Equal(t, 64, at)
	require.InDelta(t, 60.0/12-1, worst, 1e-9)

	var b strings.Builder
	require.NoError(t, writeStability(&b, []*Result{mk(good), mk(bad)}))
	require.Contains(t, b.String(), "| 64 | 12.0 | 60.0 | 400 % |")
}

func TestCoreNsIsTheCoresTimePerPush(t *testing.T) {
	require.InDelta(t, 20.0, coreNs(64, 2, 100e6), 1e-9, "two cores for 10 ns each push")
	require.InDelta(t, 10.0, coreNs(1, 2, 100e6), 1e-9, "one producer can use one core only")
	require.Zero(t, coreNs(4, 2, 0))
	r := Row{Producers: 8, ThroughputTrials: []float64{100e6, 50e6, 200e6}}
	setCoreNs(&r, 2)
	require.Equal(t, []float64{20, 40, 10}, r.CoreNsTrials)
	require.Equal(t, 20.0, r.CoreNsPerOp)
	require.Equal(t, 10.0, r.CoreNsMin)
	require.Equal(t, 40.0, r.CoreNsMax)
	res := &Result{Run: report.Run{Machine: report.Machine{GOMAXPROCS: 2}}, Rows: []Row{{Producers: 1, ThroughputTrials: []float64{1e8}}}}
	fillCoreNs(res)
	require.Equal(t, 10.0, res.Rows[0].CoreNsPerOp, "a run recorded before core-ns is derived from its throughput")
}

func TestReadmeBlockIsReplacedInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "benchmarks.md")
	require.NoError(t, os.WriteFile(path, []byte("# Title\n\nprose\n"+readmeBegin+"\nold table\n"+readmeEnd+"\nmore prose\n"), 0o644))
	require.NoError(t, replaceReadmeBlock(path, "new table\n"))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "# Title\n\nprose\n"+readmeBegin+"\nnew table\n"+readmeEnd+"\nmore prose\n", string(got))
	block, err := readmeBlock(string(got))
	require.NoError(t, err)
	require.Equal(t, "new table\n", block)
	require.NoError(t, os.WriteFile(path, []byte("no markers"), 0o644))
	require.ErrorContains(t, replaceReadmeBlock(path, "x"), "no generated block")
}

// TestReadmeIsUpToDate renders the decision block from the committed JSON
// and fails when a markdown file of the repository that holds the block
// (docs/benchmarks.md) says something else: the tables are the committed
// measurement, not a copy that can drift.
func TestReadmeIsUpToDate(t *testing.T) {
	runs, err := readResults("runs/*.json")
	require.NoError(t, err)
	var want bytes.Buffer
	require.NoError(t, writeReadme(&want, runs))
	files := commandtest.MarkdownWith(t, "../..", "<!-- contended:begin")
	require.NotEmpty(t, files, "no markdown file of the repository holds the contended block")
	for _, f := range files {
		text, err := os.ReadFile(f)
		require.NoError(t, err)
		got, err := readmeBlock(string(text))
		require.NoError(t, err, f)
		require.Equal(t, want.String(), got,
			"%s: the generated block differs from bench/contended/runs/*.json; regenerate it with\n"+
				"go run ./bench/contended -from 'bench/contended/runs/*.json' -format readme -o docs/benchmarks.md", f)
	}
}

func TestSVG(t *testing.T) {
	t.Run("it escapes text and draws any implementation", func(t *testing.T) {
		res := &Result{Rows: []Row{
			{Impl: "a<&>", Producers: 1, CPUNsPerOp: 3, Consumers: "held", PayloadBytes: 8},
			{Impl: "a<&>", Producers: 8, CPUNsPerOp: 3000, Consumers: "held", PayloadBytes: 8},
			{Impl: "b", Producers: 8, CPUNsPerOp: 0.5, Consumers: "held", PayloadBytes: 8},
			{Impl: "c", Producers: 8, CPUNsPerOp: 0.5, Consumers: "draining", PayloadBytes: 8},
		}}
		res.Run.Machine.CPU = `"quoted" & <odd>`
		var b bytes.Buffer
		require.NoError(t, writeSVG(&b, res))
		lines, groups := svgCount(t, b.Bytes())
		require.Equal(t, 2, lines)
		require.Equal(t, []string{"a<&>", "b"}, groups, "the chart draws the headline table only")
	})
	t.Run("it refuses an empty table", func(t *testing.T) {
		require.Error(t, writeSVG(io.Discard, &Result{}))
	})
}

// svgCount decodes an SVG document and returns its polyline count and the
// implementations of its line groups.
func svgCount(t *testing.T, doc []byte) (polylines int, impls []string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	root := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if !root {
			require.Equal(t, "svg", se.Name.Local)
			root = true
		}
		switch se.Name.Local {
		case "polyline":
			polylines++
		case "g":
			for _, a := range se.Attr {
				if a.Name.Local == "data-impl" {
					impls = append(impls, a.Value)
				}
			}
		}
	}
	require.True(t, root)
	return polylines, impls
}

func TestTheHeadlineRunsAndTheTablesRunCombine(t *testing.T) {
	row := func(consumers string, payload int, core float64) Row {
		return Row{Impl: "sharded-push", Producers: 4, Consumers: consumers, PayloadBytes: payload, CPUNsPerOp: core, CoreNsPerOp: core}
	}
	h1 := &Result{Config: Config{Producers: []int{4}}, Rows: []Row{row("held", 8, 10)}}
	h2 := &Result{Config: Config{Producers: []int{4}}, Rows: []Row{row("held", 8, 12)}}
	tablesRun := &Result{Config: Config{Producers: []int{4}}, Rows: []Row{row("held", 32, 20), row("draining", 8, 30)},
		ShedRows: []ShedRow{{Impl: "sharded-vyukov", Producers: 4}}, Caveats: map[string]string{"lscq": "unbounded"}}
	runs := []*Result{h1, h2, tablesRun} // runs/*.json sorts run-N.json before tables.json
	res, from := combined(runs)
	require.Same(t, tablesRun, from)
	require.Equal(t, 12.0, rowsOf(res, headline)[0].CoreNsPerOp, "the headline is the last headline run's")
	require.Len(t, tables(res), 3)
	require.Len(t, res.ShedRows, 1)
	require.Equal(t, "unbounded", res.Caveats["lscq"])
	require.Len(t, headlineRuns(runs), 2, "the tables run is no run of the stability table")
	worst, at := spreadOf(runs)
	require.Equal(t, 4, at)
	require.InDelta(t, 0.2, worst, 1e-9)
	_, from = combined([]*Result{h1, h2})
	require.Nil(t, from, "a run of every table needs no other")
}

// TestTheReadmeShowsTheCommittedMethod fails when the first command of
// README.md that runs this harness is not the one that made the committed
// headline runs: run.sh with RUNS set to the number of runs/run-N.json
// files. A quicker form may follow it, labelled as such.
func TestTheReadmeShowsTheCommittedMethod(t *testing.T) {
	runs, err := filepath.Glob("runs/run-*.json")
	require.NoError(t, err)
	require.NotEmpty(t, runs, "no committed headline run")
	cmds, err := doccheck.Commands("../..", "README.md")
	require.NoError(t, err)
	var measuring []string
	for _, c := range cmds {
		if strings.Contains(c.Text, "bench/contended") && !strings.Contains(c.Text, " -from ") {
			measuring = append(measuring, c.Text)
		}
	}
	require.NotEmpty(t, measuring, "README.md gives no command that runs bench/contended")
	require.Equal(t, fmt.Sprintf("RUNS=%d bash bench/contended/run.sh", len(runs)), measuring[0],
		"README.md's first command that runs the harness is not the committed method")
}
