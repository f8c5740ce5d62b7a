package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/shardedsink/shardedsink/bench/internal/report"
)

// Result is everything one run measured; it is the JSON document that
// -format json writes (rewritten as each row finishes, with complete false
// until the run ends).
//
//	{
//	  "run":       {"machine": {...}, "command", "load_before", "load_after",
//	                "gogc", "gomaxprocs_env", "flags": {...}},
//	  "config":    {"items", "trials", "shards", "producers", "consumers", "payloads", "impls"},
//	  "rows":      [{"impl", "producers", "consumers", "payload_bytes", "items",
//	                 "cpu_ns_per_op", "cpu_ns_min", "cpu_ns_max", "cpu_ns_trials",
//	                 "proc_cpu_ns_per_op", "proc_cpu_ns_trials", "drop_pct",
//	                 "throughput_per_s", "throughput_trials", "p99_ns", "p999_ns", "max_ns",
//	                 "counters": {"gc_cycles", "minor_faults", "ctx_switches", "consumed"},
//	                 "consumed_pct"}],
//	  "shed_rows": [{"impl", "producers", "payload_bytes", "cpu_ns_per_op", "cpu_ns_min",
//	                 "cpu_ns_max", "cpu_ns_trials", "rejected_pct"}],
//	  "caveats":   {"<impl>": "<text>"},
//	  "complete":  true
//	}
type Result struct {
	Run      report.Run        `json:"run"`
	Config   Config            `json:"config"`
	Rows     []Row             `json:"rows"`
	ShedRows []ShedRow         `json:"shed_rows"`
	Caveats  map[string]string `json:"caveats"`
	Complete bool              `json:"complete"`
}

// Config records the shape of the run (every flag is in Run.Flags too).
type Config struct {
	Items     int      `json:"items"` // timed pushes per producer (zenq rows may use fewer; see caveats)
	Trials    int      `json:"trials"`
	Shards    int      `json:"shards"`
	Producers []int    `json:"producers"`
	Consumers []string `json:"consumers"`
	Payloads  []int    `json:"payloads"`
	Tables    []string `json:"tables"` // consumers/payload, in the order measured
	Impls     []string `json:"impls"`
	Idle      string   `json:"idle"` // idle mode of the sink rows (sharded-default excepted) when draining
}

// Row is one line of an accept-path table.
type Row struct {
	Impl         string `json:"impl"`
	Producers    int    `json:"producers"`
	Consumers    string `json:"consumers"`     // held or draining
	PayloadBytes int    `json:"payload_bytes"` // 8 or 32
	Items        int    `json:"items"`         // timed pushes per producer in this row

	// Per-thread CPU ns per accepted timed push: the producers' thread CPU
	// over their accepted timed pushes, per trial; median, min and max.
	CPUNsPerOp  float64   `json:"cpu_ns_per_op"`
	CPUNsMin    float64   `json:"cpu_ns_min"`
	CPUNsMax    float64   `json:"cpu_ns_max"`
	CPUNsTrials []float64 `json:"cpu_ns_trials"`
	// Process CPU (getrusage RUSAGE_SELF: every thread, workers and GC
	// included) over the producer phase, per accepted push; median.
	ProcCPUNsPerOp   float64   `json:"proc_cpu_ns_per_op"`
	ProcCPUNsTrials  []float64 `json:"proc_cpu_ns_trials"`
	DropPct          float64   `json:"drop_pct"`         // rejected pushes, pooled over all trials and the tail run
	ThroughputPerS   float64   `json:"throughput_per_s"` // median over trials of accepted timed pushes / wall time
	ThroughputTrials []float64 `json:"throughput_trials"`
	P99Ns            float64   `json:"p99_ns"` // wall clock, tail run
	P999Ns           float64   `json:"p999_ns"`
	MaxNs            float64   `json:"max_ns"`
	// Parallelism is how many producers ran their timed loops at once, on
	// average (their thread CPU over the wall time of the timed phase),
	// median of the trials: at most GOMAXPROCS; near 1 on a machine whose
	// other jobs leave one core, where contention between producers
	// cannot show.
	Parallelism float64 `json:"parallelism"`
	// Counters sums the trials' producer phases.
	Counters counters `json:"counters"`
	// ConsumedPct is the share of accepted pushes that the consumers had
	// taken when the last producer finished, pooled over the trials: 0
	// proves a held row held.
	ConsumedPct float64 `json:"consumed_pct"`
}

// ShedRow is one line of the shed-path table: the cost of a rejected push.
type ShedRow struct {
	Impl         string    `json:"impl"`
	Producers    int       `json:"producers"`
	PayloadBytes int       `json:"payload_bytes"`
	CPUNsPerOp   float64   `json:"cpu_ns_per_op"` // median over trials, per rejected push
	CPUNsMin     float64   `json:"cpu_ns_min"`
	CPUNsMax     float64   `json:"cpu_ns_max"`
	CPUNsTrials  []float64 `json:"cpu_ns_trials"`
	RejectedPct  float64   `json:"rejected_pct"` // should read 100
}

// tableKey names one table of a run: a consumer mode and a payload size.
type tableKey struct {
	consumers string
	payload   int
}

func (k tableKey) String() string {
	return fmt.Sprintf("consumers %s, %d-byte payload", k.consumers, k.payload)
}

// headline is the table the decision and the goals are read from.
var headline = tableKey{"held", 8}

// tables lists the tables of a run in the order they were measured.
func tables(res *Result) []tableKey {
	var out []tableKey
	for _, r := range res.Rows {
		k := tableKey{r.Consumers, r.PayloadBytes}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// rowsOf returns the rows of one table.
func rowsOf(res *Result, k tableKey) []Row {
	var out []Row
	for _, r := range res.Rows {
		if r.Consumers == k.consumers && r.PayloadBytes == k.payload {
			out = append(out, r)
		}
	}
	return out
}

// find returns the row of impl at p producers in rows.
func find(rows []Row, impl string, p int) (Row, bool) {
	for _, r := range rows {
		if r.Impl == impl && r.Producers == p {
			return r, true
		}
	}
	return Row{}, false
}

// describeRun is the paragraph above every rendering: machine, kernel, THP,
// load, GOGC and the command.
func describeRun(res *Result) string {
	r := res.Run
	gogc := r.GOGC
	if gogc == "" {
		gogc = "unset (100)"
	}
	state := ""
	if !res.Complete {
		state = " **(incomplete: the run did not finish)**"
	}
	return fmt.Sprintf("Machine: %s; kernel %s, transparent huge pages %s, GOGC %s; load average %s before, %s after.%s\n\n"+
		"Command: `%s` (%d items per producer, %d trials, %d shards, sink rows draining in idle mode %s)\n",
		r.Machine, r.Machine.Kernel, r.Machine.THP, gogc, report.FormatLoad(r.LoadBefore), report.FormatLoad(r.LoadAfter), state,
		r.Command, res.Config.Items, res.Config.Trials, res.Config.Shards, res.Config.Idle)
}

// writeMarkdown writes the full tables for people (RESULTS.md): the run,
// for every table all columns, the goals, the stability over runs, the shed
// table and the notes.
func writeMarkdown(w io.Writer, runs []*Result) error {
	res := runs[len(runs)-1]
	var b strings.Builder
	b.WriteString("# Contended accept path: the full tables\n\n")
	fmt.Fprintf(&b, "Rendered from %s of the harness (the tables from the last, the stability table from all of them) "+
		"by `bash bench/contended/run.sh`, or from the committed JSON by "+
		"`go run ./bench/contended -from 'bench/contended/runs/*.json' -o bench/contended/RESULTS.md`. "+
		"docs/design.md's section \"Why sharded Vyukov rings\" reads them.\n\n", plural(len(runs), "run"))
	b.WriteString(describeRun(res))
	b.WriteString("\n")
	for _, k := range tables(res) {
		fmt.Fprintf(&b, "### Accept path, %s\n\n", k)
		b.WriteString("cpu ns/op: per-thread CPU per accepted push, median (min, max) of the trials; proc: process CPU per accepted push (every thread); " +
			"parallel: producers running their timed loops at once, on average; GCs, faults and switches: summed over the trials' producer phases; consumed: share of the accepted pushes the consumers had taken when the producers finished.\n\n")
		var rows [][]string
		for _, r := range rowsOf(res, k) {
			rows = append(rows, []string{
				r.Impl, strconv.Itoa(r.Producers), sig3(r.CPUNsPerOp), sig3(r.CPUNsMin), sig3(r.CPUNsMax), sig3(r.ProcCPUNsPerOp),
				pct(r.DropPct), perSecond(r.ThroughputPerS), report.Nanos(r.P99Ns), report.Nanos(r.P999Ns), report.Nanos(r.MaxNs),
				strconv.FormatFloat(r.Parallelism, 'f', 2, 64), strconv.FormatInt(r.Counters.GCCycles, 10), strconv.FormatInt(r.Counters.MinorFaults, 10),
				strconv.FormatInt(r.Counters.CtxSwitches, 10), pct(r.ConsumedPct),
			})
		}
		if err := report.WriteTable(&b, []string{"impl", "producers", "cpu ns/op", "min", "max", "proc ns/op", "drop %",
			"throughput/s", "p99", "p99.9", "max", "parallel", "GCs", "faults", "switches", "consumed %"}, nil, rows); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	if err := writeGoalsAndStability(&b, runs); err != nil {
		return err
	}
	if len(res.ShedRows) > 0 {
		fmt.Fprintf(&b, "### Shed path: per-thread CPU ns per rejected push, every ring of the sink full (%d-byte payload)\n\n", res.ShedRows[0].PayloadBytes)
		var rows [][]string
		for _, r := range res.ShedRows {
			rows = append(rows, []string{r.Impl, strconv.Itoa(r.Producers), sig3(r.CPUNsPerOp), sig3(r.CPUNsMin), sig3(r.CPUNsMax), pct(r.RejectedPct)})
		}
		if err := report.WriteTable(&b, []string{"impl", "producers", "cpu ns/op", "min", "max", "rejected %"}, nil, rows); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	b.WriteString("### Notes\n\n")
	b.WriteString(methodNote)
	for _, name := range caveatOrder(res) {
		fmt.Fprintf(&b, "- **%s**: %s\n", name, res.Caveats[name])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeGoalsAndStability writes the goals of the headline table and, for
// several runs, the stability table.
func writeGoalsAndStability(b *strings.Builder, runs []*Result) error {
	if goals := checkGoals(runs); len(goals) > 0 {
		b.WriteString("### Goals (held consumers, 8-byte payload)\n\n")
		for _, g := range goals {
			fmt.Fprintf(b, "- %s\n", g)
		}
		b.WriteString("\n")
	}
	if len(runs) > 1 {
		fmt.Fprintf(b, "### Stability: "+stableImpl+" over %d runs (held, 8 bytes, per-thread CPU ns per push, median of each run)\n\n", len(runs))
		if err := writeStability(b, runs); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	return nil
}

// methodNote is the first bullet of the notes: how the numbers were made.
const methodNote = "- **method**: every producer is a goroutine locked to its own OS thread; after a barrier it makes " +
	"items/10 warm-up pushes, then items timed pushes between two readings of its thread's CPU clock " +
	"(CLOCK_THREAD_CPUTIME_ID). cpu ns/op is the producers' CPU time over their accepted timed pushes; " +
	"it excludes time spent waiting for a core. proc ns/op is the process's CPU time (getrusage, every thread: workers, " +
	"consumers, GC, scheduler) from the producers' release to the last one's end, over the accepted pushes of that phase. " +
	"Rings hold the whole burst (sharded: ceil(producers/shards) x (items + items/10) + 1024 per shard; 1-shard sink " +
	"and single queues: producers x (items + items/10) + 1024), are allocated and pre-touched outside the timing, rounded-up " +
	"capacities included: once per row for the queues, before every trial for the sink rows (Shutdown closes a sink's rings); " +
	"the garbage is collected before each trial. Drop % (pooled over " +
	"every trial and the tail run) must read 0. Throughput is accepted timed pushes per second of wall clock, median of " +
	"the trials. p99, p99.9 and max come from a separate run that times every push with the wall clock, " +
	"sorted[round(p*(n-1))]. Sink rows: a Handle per producer (round-robin), stealing off, batch 256 (sharded-push: " +
	"the default Config and Sink.Push). Held: nobody " +
	"pops during a trial (the sink's workers wait in Drain on a gate, entered before the producers start; a queue gets " +
	"no consumer until the producers are done). Draining: every consumer takes up to 256 values, yields, and sleeps " +
	"100 µs when empty (sink rows in IdlePoll mode, queues with one consumer goroutine; sharded-default keeps " +
	"IdleWake). Shed rows: a sharded sink with 1024 slots per shard whose drain workers are blocked and whose rings are " +
	"full; cpu ns/op per rejected (and counted) push.\n"

// caveatOrder lists the caveats in table order.
func caveatOrder(res *Result) []string {
	var names []string
	seen := map[string]bool{}
	for _, r := range res.Rows {
		if _, ok := res.Caveats[r.Impl]; ok && !seen[r.Impl] {
			seen[r.Impl] = true
			names = append(names, r.Impl)
		}
	}
	var rest []string
	for name := range res.Caveats {
		if !seen[name] {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	return append(names, rest...)
}

// pivot turns a table's rows into impl x producers medians. The first row
// is the header.
func pivot(rows []Row) [][]string {
	if len(rows) == 0 {
		return nil
	}
	var names []string
	var prods []int
	for _, r := range rows {
		if !slices.Contains(names, r.Impl) {
			names = append(names, r.Impl)
		}
		if !slices.Contains(prods, r.Producers) {
			prods = append(prods, r.Producers)
		}
	}
	slices.Sort(prods)
	header := []string{"impl"}
	for _, p := range prods {
		header = append(header, strconv.Itoa(p))
	}
	out := [][]string{header}
	for _, n := range names {
		line := []string{n}
		for _, p := range prods {
			if r, ok := find(rows, n, p); ok {
				line = append(line, sig3(r.CPUNsPerOp))
			} else {
				line = append(line, "")
			}
		}
		out = append(out, line)
	}
	return out
}

// goal is one of the design's goals, evaluated.
type goal struct {
	text string
	met  bool
}

func (g goal) String() string {
	if g.met {
		return g.text + ": met"
	}
	return g.text + ": **missed**"
}

// stableImpl is the row whose medians the stability over runs follows: the
// headline row.
const stableImpl = "sharded-push"

// checkGoals evaluates the goals on the headline table of the last run and
// the stability over all runs: the headline row (sharded-push) against its
// own cost at 1 producer, the single shared ring, the single channel and
// mutex, and the Handle push of the same Config (sharded-default); and the
// original's decision, the notifying sink against the plain one.
func checkGoals(runs []*Result) []string {
	res := runs[len(runs)-1]
	rows := rowsOf(res, headline)
	var out []string
	add := func(g goal) { out = append(out, g.String()) }
	sp1, ok1 := find(rows, stableImpl, 1)
	sp64, ok64 := find(rows, stableImpl, 64)
	sp256, ok256 := find(rows, stableImpl, 256)
	if ok1 && ok256 && sp1.CPUNsPerOp > 0 {
		r := sp256.CPUNsPerOp / sp1.CPUNsPerOp
		add(goal{fmt.Sprintf("sharded-push at 256 producers costs %sx its cost at 1 (%s vs %s ns; goal <= 1.3x; the original: 3.3x)",
			ratio(r), sig3(sp256.CPUNsPerOp), sig3(sp1.CPUNsPerOp)), r <= 1.3})
	}
	if sing, ok := find(rows, "single-vyukov", 64); ok64 && ok && sing.CPUNsPerOp > 0 {
		r := sp64.CPUNsPerOp / sing.CPUNsPerOp
		add(goal{fmt.Sprintf("sharded-push at 64 producers costs %sx single-vyukov per push (%s vs %s ns; goal <= 0.15x)",
			ratio(r), sig3(sp64.CPUNsPerOp), sig3(sing.CPUNsPerOp)), r <= 0.15})
	}
	for _, peer := range []string{"single-chan", "single-mutex"} {
		if q, ok := find(rows, peer, 64); ok64 && ok && q.ThroughputPerS > 0 {
			r := sp64.ThroughputPerS / q.ThroughputPerS
			add(goal{fmt.Sprintf("sharded-push at 64 producers moves %sx the throughput of %s (%s/s vs %s/s; goal >= 2x)",
				ratio(r), peer, perSecond(sp64.ThroughputPerS), perSecond(q.ThroughputPerS)), r >= 2})
		}
	}
	if h1, ok := find(rows, "sharded-default", 1); ok1 && ok && h1.CPUNsPerOp > 0 {
		r := sp1.CPUNsPerOp / h1.CPUNsPerOp
		add(goal{fmt.Sprintf("Sink.Push at 1 producer costs %sx Handle.Push with the same Config (sharded-push vs sharded-default: %s vs %s ns; goal <= 1.25x)",
			ratio(r), sig3(sp1.CPUNsPerOp), sig3(h1.CPUNsPerOp)), r <= 1.25})
	}
	sv64, okv := find(rows, "sharded-vyukov", 64)
	if n, ok := find(rows, "sharded-notify", 64); okv && ok && sv64.CPUNsPerOp > 0 {
		r := n.CPUNsPerOp / sv64.CPUNsPerOp
		add(goal{fmt.Sprintf("sharded-notify at 64 producers costs %sx sharded-vyukov (%s vs %s ns; goal >= 2x)",
			ratio(r), sig3(n.CPUNsPerOp), sig3(sv64.CPUNsPerOp)), r >= 2})
	}
	if len(runs) > 1 {
		worst, at := spreadOf(runs)
		if at > 0 {
			add(goal{fmt.Sprintf("over %d runs the sharded-push medians stay within %s of each other at every producer count (widest at %d producers; goal <= 25 %%)",
				len(runs), pctText(worst), at), worst <= 0.25})
		}
	}
	var dropped []string
	for _, r := range res.Rows {
		if r.DropPct > 0 && r.Impl != "xsync" && r.Impl != "workiva" {
			dropped = append(dropped, fmt.Sprintf("%s@%d (%s)", r.Impl, r.Producers, tableKey{r.Consumers, r.PayloadBytes}))
		}
	}
	if len(res.Rows) > 0 {
		if len(dropped) == 0 {
			add(goal{"drop % is 0 on every accept-path row of every table (xsync and workiva excepted: their drops are lost races)", true})
		} else {
			add(goal{"drop % above 0 on " + strings.Join(dropped, ", "), false})
		}
	}
	var moved []string
	for _, r := range res.Rows {
		if r.Consumers == "held" && r.ConsumedPct > 0 {
			moved = append(moved, fmt.Sprintf("%s@%d", r.Impl, r.Producers))
		}
	}
	if len(moved) > 0 {
		add(goal{"held rows whose consumers took values during a trial: " + strings.Join(moved, ", "), false})
	}
	return out
}

// spreadOf is the widest spread, max/min - 1, of the stableImpl medians
// over the runs' headline tables at one producer count, and that count.
func spreadOf(runs []*Result) (worst float64, at int) {
	for _, p := range runs[len(runs)-1].Config.Producers {
		vals := stabilityValues(runs, p)
		if len(vals) < 2 {
			continue
		}
		lo, hi := slices.Min(vals), slices.Max(vals)
		if lo > 0 && hi/lo-1 >= worst {
			worst, at = hi/lo-1, p
		}
	}
	return worst, at
}

// stabilityValues are the stableImpl medians at p producers of every run
// that has them.
func stabilityValues(runs []*Result, p int) []float64 {
	var vals []float64
	for _, res := range runs {
		if r, ok := find(rowsOf(res, headline), stableImpl, p); ok {
			vals = append(vals, r.CPUNsPerOp)
		}
	}
	return vals
}

// writeStability writes producers x runs of the stableImpl medians, with
// the spread of each producer count.
func writeStability(w io.Writer, runs []*Result) error {
	header := []string{"producers"}
	for i, res := range runs {
		header = append(header, fmt.Sprintf("run %d (load %s)", i+1, loadOne(res.Run.LoadBefore)))
	}
	header = append(header, "spread (max/min - 1)")
	var rows [][]string
	for _, p := range runs[len(runs)-1].Config.Producers {
		line := []string{strconv.Itoa(p)}
		for _, res := range runs {
			if r, ok := find(rowsOf(res, headline), stableImpl, p); ok {
				line = append(line, sig3(r.CPUNsPerOp))
			} else {
				line = append(line, "")
			}
		}
		vals := stabilityValues(runs, p)
		if len(vals) >= 2 && slices.Min(vals) > 0 {
			line = append(line, pctText(slices.Max(vals)/slices.Min(vals)-1))
		} else {
			line = append(line, "")
		}
		rows = append(rows, line)
	}
	return report.WriteTable(w, header, nil, rows)
}

func loadOne(l []float64) string {
	if len(l) == 0 {
		return "?"
	}
	return fmt.Sprintf("%.2f", l[0])
}

func pctText(x float64) string { return strconv.FormatFloat(100*x, 'f', 0, 64) + " %" }

func ratio(x float64) string { return report.Sig3(x) }

// sig3 formats a number with three significant digits, without exponent.
func sig3(x float64) string { return report.Sig3(x) }

// pct formats a percentage; an exact zero reads "0".
func pct(x float64) string {
	if x == 0 {
		return "0"
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// perSecond formats a rate with an SI suffix: 312 M, 4.51 k.
func perSecond(x float64) string {
	r := report.RoundSig(x, 3)
	switch {
	case r >= 1e9:
		return sig3(r/1e9) + " G"
	case r >= 1e6:
		return sig3(r/1e6) + " M"
	case r >= 1e3:
		return sig3(r/1e3) + " k"
	default:
		return sig3(r)
	}
}

// writeBenchfmt writes one benchfmt line per trial of every row and shed
// row of every run, after one header, for benchstat:
//
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl -row /producers -filter '/consumers:held /payload:8' runs.txt
func writeBenchfmt(w io.Writer, runs []*Result) error {
	if err := report.WriteBenchHeader(w, "github.com/shardedsink/shardedsink/bench/contended", runs[0].Run); err != nil {
		return err
	}
	for _, res := range runs {
		for _, r := range res.Rows {
			name := "BenchmarkContended/" + report.BenchKey("consumers", r.Consumers) + "/" +
				report.BenchKey("payload", strconv.Itoa(r.PayloadBytes)) + "/" + report.BenchKey("impl", r.Impl) + "/" +
				report.BenchKey("producers", strconv.Itoa(r.Producers))
			for i, cpu := range r.CPUNsTrials {
				ms := []report.Metric{{Value: cpu, Unit: "cpu-ns/op"}}
				if i < len(r.ProcCPUNsTrials) {
					ms = append(ms, report.Metric{Value: r.ProcCPUNsTrials[i], Unit: "proc-cpu-ns/op"})
				}
				if i < len(r.ThroughputTrials) {
					ms = append(ms, report.Metric{Value: r.ThroughputTrials[i], Unit: "pushes/s"})
				}
				if err := report.WriteBenchLine(w, name, int64(r.Items*r.Producers), ms...); err != nil {
					return err
				}
			}
		}
		for _, r := range res.ShedRows {
			name := "BenchmarkShed/" + report.BenchKey("payload", strconv.Itoa(r.PayloadBytes)) + "/" +
				report.BenchKey("impl", r.Impl) + "/" + report.BenchKey("producers", strconv.Itoa(r.Producers))
			for _, cpu := range r.CPUNsTrials {
				if err := report.WriteBenchLine(w, name, int64(res.Config.Items*r.Producers), report.Metric{Value: cpu, Unit: "cpu-ns/op"}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
