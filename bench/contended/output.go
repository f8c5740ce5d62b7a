package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shardedsink/shardedsink/bench/internal/report"
)

// Result is everything one run measured; it is the JSON document that
// -format json writes (rewritten as each row finishes, with complete false
// until the run ends).
//
//	{
//	  "run":       {"machine": {...}, "command", "load_before", "load_after",
//	                "gogc", "gomaxprocs_env", "flags": {...}},
//	  "config":    {"window_ns", "round", "trials", "shards", "producers", "consumers",
//	                "payloads", "tables", "impls", "idle", "homes", "realtime"},
//	  "rows":      [{"impl", "producers", "consumers", "payload_bytes", "round", "rounds",
//	                 "cpu_ns_per_op", "cpu_ns_min", "cpu_ns_max", "cpu_ns_trials",
//	                 "proc_cpu_ns_per_op", "proc_cpu_ns_trials", "drop_pct",
//	                 "throughput_per_s", "throughput_trials", "pushes_trials",
//	                 "core_ns_per_op", "core_ns_min", "core_ns_max", "core_ns_trials",
//	                 "p99_ns", "p999_ns", "max_ns",
//	                 "parallelism", "parallelism_trials", "parallelism_floor", "valid", "overlap", "scheduler",
//	                 "counters": {"gc_cycles", "minor_faults", "ctx_switches", "consumed"},
//	                 "consumed_pct"}],
//	  "shed_rows": [{"impl", "producers", "payload_bytes", "cpu_ns_per_op", "cpu_ns_min",
//	                 "cpu_ns_max", "cpu_ns_trials", "rejected_pct",
//	                 "parallelism", "parallelism_trials", "parallelism_floor", "valid", "scheduler"}],
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
	WindowNs  int64    `json:"window_ns"` // measured time per trial
	Round     int      `json:"round"`     // pushes per round: what every ring holds beyond the slack (zenq rows use fewer)
	Trials    int      `json:"trials"`
	Shards    int      `json:"shards"`
	Producers []int    `json:"producers"`
	Consumers []string `json:"consumers"`
	Payloads  []int    `json:"payloads"`
	Tables    []string `json:"tables"` // consumers/payload, in the order measured
	Impls     []string `json:"impls"`
	Idle      string   `json:"idle"` // idle mode of the sink rows (sharded-default excepted) when draining
	// Homes is how Sink.Push chose its ring in this run: "cpu" (the CPU
	// number, RDPID) or "stack" (the goroutine's stack address).
	Homes string `json:"homes"`
	// Realtime is the -realtime flag: held and shed rows run their
	// producers' threads under SCHED_RR where the process may.
	Realtime bool `json:"realtime"`
}

// Row is one line of an accept-path table.
type Row struct {
	Impl         string `json:"impl"`
	Producers    int    `json:"producers"`
	Consumers    string `json:"consumers"`     // held or draining
	PayloadBytes int    `json:"payload_bytes"` // 8 or 32
	Round        int    `json:"round"`         // pushes per round in this row
	// Rounds is the number of measured rounds per trial, median.
	Rounds float64 `json:"rounds"`

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
	// Core-ns per accepted push: min(producers, GOMAXPROCS) x the rounds'
	// wall time / accepted pushes, per trial (corens.go); median, min and
	// max. The headline metric: it needs no validity mark.
	CoreNsPerOp  float64   `json:"core_ns_per_op"`
	CoreNsMin    float64   `json:"core_ns_min"`
	CoreNsMax    float64   `json:"core_ns_max"`
	CoreNsTrials []float64 `json:"core_ns_trials"`
	PushesTrials []int64   `json:"pushes_trials"` // accepted timed pushes per trial
	P99Ns        float64   `json:"p99_ns"`        // wall clock, tail run
	P999Ns       float64   `json:"p999_ns"`
	MaxNs        float64   `json:"max_ns"`
	// Parallelism is how many producers pushed at once, on average (their
	// thread CPU over the wall time of the measured rounds), median of the
	// trials: at most GOMAXPROCS; near 1 on a machine whose other jobs
	// leave one core, where contention between producers cannot show.
	Parallelism       float64   `json:"parallelism"`
	ParallelismTrials []float64 `json:"parallelism_trials"`
	// ParallelismFloor is what Parallelism must reach for the row to be
	// Valid: 0.9 x min(producers, GOMAXPROCS) from 2 producers on, 0 at 1.
	// No goal reads an invalid row, and every format marks it.
	ParallelismFloor float64 `json:"parallelism_floor"`
	Valid            bool    `json:"valid"`
	// Overlap is the share of the measured rounds' wall time during which
	// min(producers, GOMAXPROCS) producers were inside their round (between
	// their first claim and their last push), running or not, median of the
	// trials: near 1, the harness released them together and they stopped
	// together, so a row that is invalid all the same lost the processors
	// to its own waits (its queue yields or parks the producer).
	Overlap float64 `json:"overlap"`
	// Scheduler is the producers' scheduling policy in this row:
	// "SCHED_RR" (held rows, where the process may set it), or "default",
	// with the reason when SCHED_RR was refused.
	Scheduler string `json:"scheduler"`
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
	// Parallelism, validity and scheduler as in Row.
	Parallelism       float64   `json:"parallelism"`
	ParallelismTrials []float64 `json:"parallelism_trials"`
	ParallelismFloor  float64   `json:"parallelism_floor"`
	Valid             bool      `json:"valid"`
	Scheduler         string    `json:"scheduler"`
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
	return fmt.Sprintf("Machine: %s; kernel %s, transparent huge pages %s, GOGC %s; load average %s before, %s after; "+
		"Sink.Push took %s.%s\n\n"+
		"Command: `%s` (%s, %d trials, %d shards, sink rows draining in idle mode %s)\n",
		r.Machine, r.Machine.Kernel, r.Machine.THP, gogc, report.FormatLoad(r.LoadBefore), report.FormatLoad(r.LoadAfter),
		homesText(res.Config.Homes), state,
		r.Command, windowText(res.Config), res.Config.Trials, res.Config.Shards, res.Config.Idle)
}

// homesText says in words how Sink.Push chose its ring.
func homesText(h string) string {
	switch h {
	case "cpu":
		return "the ring of the CPU it ran on (RDPID)"
	case "stack":
		return "the ring of its goroutine's stack (no RDPID, or not linux/amd64)"
	}
	return "an unrecorded home"
}

// windowText describes the measured window of a run.
func windowText(c Config) string {
	return fmt.Sprintf("a %v window per trial in rounds of up to %s pushes", time.Duration(c.WindowNs), groupDigits(c.Round))
}

// groupDigits writes n with thousands separators: 1,048,576.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// coreCell is a row's core-ns per push as a table cell.
func coreCell(r Row) string { return sig3(r.CoreNsPerOp) }

// cpuCell is a row's CPU ns per push as a table cell: an invalid row says
// so in the cell.
func cpuCell(r Row) string {
	if r.Valid {
		return sig3(r.CPUNsPerOp)
	}
	return fmt.Sprintf("%s (invalid: parallel %.2f, overlap %.2f)", sig3(r.CPUNsPerOp), r.Parallelism, r.Overlap)
}

// parallelCell is a row's parallelism as a table cell, with the floor an
// invalid row missed.
func parallelCell(par, floor float64, valid bool) string {
	if valid {
		return strconv.FormatFloat(par, 'f', 2, 64)
	}
	return belowFloor(par, floor) + ": **invalid**"
}

// belowFloor writes "par < floor" with as many decimals as it takes for
// the two to differ (at least two): a parallelism of 1.796 against a floor
// of 1.80 reads "1.796 < 1.80", not "1.80 < 1.80".
func belowFloor(par, floor float64) string {
	d := 2
	for ; d < 6 && strconv.FormatFloat(par, 'f', d, 64) == strconv.FormatFloat(floor, 'f', d, 64); d++ {
	}
	return strconv.FormatFloat(par, 'f', d, 64) + " < " + strconv.FormatFloat(floor, 'f', 2, 64)
}

// writeMarkdown writes the full tables for people (RESULTS.md): the run,
// for every table all columns, the goals, the stability over runs, the shed
// table and the notes.
func writeMarkdown(w io.Writer, runs []*Result) error {
	res, tablesRun := combined(runs)
	var b strings.Builder
	b.WriteString("# Contended accept path: the full tables\n\n")
	fmt.Fprintf(&b, "Rendered from %s of the harness (the tables from the last, the stability table from all of them) "+
		"by `bash bench/contended/run.sh`, or from the committed JSON by "+
		"`go run ./bench/contended -from 'bench/contended/runs/*.json' -o bench/contended/RESULTS.md`. "+
		"docs/design.md's section \"Why sharded Vyukov rings\" reads them.\n\n", plural(len(runs), "run"))
	b.WriteString(describeRun(res))
	b.WriteString("\n")
	if tablesRun != nil {
		b.WriteString("The tables other than the headline and the shed path come from another run. ")
		b.WriteString(describeRun(tablesRun))
		b.WriteString("\n")
	}
	for _, k := range tables(res) {
		fmt.Fprintf(&b, "### Accept path, %s\n\n", k)
		b.WriteString("core-ns/op: min(producers, GOMAXPROCS) x the rounds' wall time / accepted pushes, median (min, max) of the trials, the headline metric; " +
			"cpu ns/op: per-thread CPU per accepted push, median (min, max) of the trials; proc: process CPU per accepted push (every thread); " +
			"parallel: producers pushing at once, on average over the measured rounds (a row at 2 or more producers below 0.9 x min(producers, GOMAXPROCS) is invalid); " +
			"rounds: measured rounds per trial; GCs, faults and switches: summed over the trials' rounds; consumed: share of the accepted pushes the consumers had taken by the end of each round.\n\n")
		var rows [][]string
		for _, r := range rowsOf(res, k) {
			rows = append(rows, []string{
				r.Impl, strconv.Itoa(r.Producers), sig3(r.CoreNsPerOp), sig3(r.CoreNsMin), sig3(r.CoreNsMax),
				cpuCell(r), sig3(r.CPUNsMin), sig3(r.CPUNsMax), sig3(r.ProcCPUNsPerOp),
				pct(r.DropPct), perSecond(r.ThroughputPerS), report.Nanos(r.P99Ns), report.Nanos(r.P999Ns), report.Nanos(r.MaxNs),
				parallelCell(r.Parallelism, r.ParallelismFloor, r.Valid), sig3(r.Rounds), strconv.FormatInt(r.Counters.GCCycles, 10),
				strconv.FormatInt(r.Counters.MinorFaults, 10), strconv.FormatInt(r.Counters.CtxSwitches, 10), pct(r.ConsumedPct),
			})
		}
		if err := report.WriteTable(&b, []string{"impl", "producers", "core-ns/op", "min", "max", "cpu ns/op", "min", "max", "proc ns/op", "drop %",
			"throughput/s", "p99", "p99.9", "max", "parallel", "rounds", "GCs", "faults", "switches", "consumed %"}, nil, rows); err != nil {
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
			rows = append(rows, []string{r.Impl, strconv.Itoa(r.Producers), sig3(r.CPUNsPerOp), sig3(r.CPUNsMin), sig3(r.CPUNsMax), pct(r.RejectedPct),
				parallelCell(r.Parallelism, r.ParallelismFloor, r.Valid)})
		}
		if err := report.WriteTable(&b, []string{"impl", "producers", "cpu ns/op", "min", "max", "rejected %", "parallel"}, nil, rows); err != nil {
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
	if len(headlineRuns(runs)) > 1 {
		fmt.Fprintf(b, "### Stability: "+stableImpl+" over %d runs (held, 8 bytes, core-ns per push, median of each run)\n\n", len(headlineRuns(runs)))
		if err := writeStability(b, runs); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	return nil
}

// methodNote is the first bullet of the notes: how the numbers were made.
const methodNote = "- **method**: every producer is a goroutine locked to its own OS thread. A trial is a warm-up round, then " +
	"measured rounds until their wall time adds up to the window. A round releases every producer with one close, once " +
	"each has locked its thread and waits; at a start line they wait until GOMAXPROCS of them spin there at once, each " +
	"on its own processor, then each claims chunks of 1,024 pushes from the round's shared budget until the budget is " +
	"spent or the round's deadline has passed, so the producers that run push at the same instant and stop together, and " +
	"none pushes alone while the others wait for a core (parallelism, their CPU over the rounds' wall time, shows it; a row " +
	"at 2 or more producers below 0.9 x min(producers, GOMAXPROCS) is marked invalid and no goal reads it; overlap tells " +
	"whether the producers were inside the round together, so that an invalid row with an overlap near 1 lost its " +
	"processors to its own waits: a ring that yields after lost races, a mutex that parks). In held and shed rows the " +
	"producers' threads run under SCHED_RR where the process may set it (-realtime; each row says which policy ran): " +
	"Linux's default policy may leave two running producers' threads on one core for milliseconds while the other idles. " +
	"cpu ns/op is the producers' thread CPU (CLOCK_THREAD_CPUTIME_ID, read around each producer's part of each round) over " +
	"their accepted pushes; it excludes time spent waiting for a core. proc ns/op is the process's CPU time (getrusage, " +
	"every thread: workers, consumers, GC, scheduler) over the measured rounds, per accepted push. Every ring and queue of a " +
	"row holds a whole round plus 2,048 slots (any one ring may take every push of a round), is allocated and pre-touched " +
	"outside the timing (rounded-up capacities included; once per row for the queues, before every trial for the sink " +
	"rows, since Shutdown closes a sink's rings), and is emptied between rounds outside the timing: held, the harness " +
	"pops what is left; draining, it waits until the consumers have taken it. The garbage is collected before each trial. " +
	"Drop % (pooled over every round of every trial and the tail run) must read 0. Throughput is accepted pushes per second " +
	"of the rounds' wall time, median of the trials. p99, p99.9 and max come from a separate round that times every push " +
	"with the wall clock, sorted[round(p*(n-1))]. Sink rows: a Handle per producer (round-robin), stealing off, batch 256 " +
	"(sharded-push: the default Config and Sink.Push). Held: nobody pops during a round (the sink's workers wait in Drain " +
	"on a gate, entered before the producers start; a queue has no consumer). Draining: every consumer takes up to 256 " +
	"values, yields, and sleeps 100 µs when empty (sink rows in IdlePoll mode, queues with one consumer goroutine; " +
	"sharded-default keeps IdleWake); the consumers share the cores with the producers. Shed rows: a sharded sink with " +
	"1024 slots per shard whose drain workers are blocked and whose rings are full, rounds with no budget, only the " +
	"deadline; cpu ns/op per rejected (and counted) push.\n"

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

// pivot turns a table's rows into impl x producers cells, cell(row) each.
// The first row is the header.
func pivot(rows []Row, cell func(Row) string) [][]string {
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
				line = append(line, cell(r))
			} else {
				line = append(line, "")
			}
		}
		out = append(out, line)
	}
	return out
}

// goal is one of the design's goals, evaluated. A goal whose rows are
// missing is left out; one whose rows are invalid is not evaluated, and
// says which row and why.
type goal struct {
	text    string
	met     bool
	invalid string // the invalid rows it would read, when not empty
}

func (g goal) String() string {
	switch {
	case g.invalid != "":
		return g.text + ": **not evaluated** (invalid rows: " + g.invalid + ")"
	case g.met:
		return g.text + ": met"
	default:
		return g.text + ": **missed**"
	}
}

// stableImpl is the row whose medians the stability over runs follows: the
// headline row.
const stableImpl = "sharded-push"

// goalRows looks up the rows a goal reads, by impl@producers. ok is false
// when one is missing (the goal is left out); invalid names those that are
// invalid.
func goalRows(rows []Row, keys ...string) (found []Row, invalid string, ok bool) {
	var bad []string
	for _, k := range keys {
		impl, ps, _ := strings.Cut(k, "@")
		p, _ := strconv.Atoi(ps)
		r, exists := find(rows, impl, p)
		if !exists || r.CPUNsPerOp <= 0 {
			return nil, "", false
		}
		if !r.Valid {
			bad = append(bad, fmt.Sprintf("%s@%d, parallel %s", impl, p, belowFloor(r.Parallelism, r.ParallelismFloor)))
		}
		found = append(found, r)
	}
	return found, strings.Join(bad, "; "), true
}

// checkGoals evaluates the goals on the headline table of the last run and
// the stability over all runs. They read core-ns per push, throughput and
// the tail, which every row can be read by (no validity mark): the headline
// row (sharded-push) against every rival at 64 and 256 producers, its tail
// against one shared ring's, its cost at 256 against 4 producers, the
// Handle push of the same Config, and the original's decision (the
// notifying sink against the plain one).
func checkGoals(runs []*Result) []string {
	res, _ := combined(runs)
	runs = headlineRuns(runs)
	rows := rowsOf(res, headline)
	var out []string
	add := func(g goal) { out = append(out, g.String()) }
	for _, p := range []int{64, 256} {
		if g, ok := leadGoal(rows, p); ok {
			add(g)
		}
		if r, _, ok := goalRows(rows, stableImpl+"@"+strconv.Itoa(p), "single-vyukov@"+strconv.Itoa(p)); ok && r[1].P99Ns > 0 {
			x := r[0].P99Ns / r[1].P99Ns
			add(goal{text: fmt.Sprintf("at %d producers sharded-push's p99 is %sx one shared vyukov ring's (%s vs %s; goal <= 0.333x)",
				p, ratio(x), report.Nanos(r[0].P99Ns), report.Nanos(r[1].P99Ns)), met: x <= 1.0/3})
		}
	}
	if r, _, ok := goalRows(rows, stableImpl+"@256", stableImpl+"@4"); ok {
		x := r[0].CoreNsPerOp / r[1].CoreNsPerOp
		add(goal{text: fmt.Sprintf("sharded-push at 256 producers costs %sx its core-ns per push at 4 (%s vs %s ns; goal <= 1.3x)",
			ratio(x), sig3(r[0].CoreNsPerOp), sig3(r[1].CoreNsPerOp)), met: x <= 1.3})
	}
	for _, peer := range []string{"single-chan", "single-mutex"} {
		if r, _, ok := goalRows(rows, stableImpl+"@64", peer+"@64"); ok && r[1].ThroughputPerS > 0 {
			x := r[0].ThroughputPerS / r[1].ThroughputPerS
			add(goal{text: fmt.Sprintf("sharded-push at 64 producers moves %sx the throughput of %s (%s/s vs %s/s; goal >= 2x)",
				ratio(x), peer, perSecond(r[0].ThroughputPerS), perSecond(r[1].ThroughputPerS)), met: x >= 2})
		}
	}
	if r, _, ok := goalRows(rows, stableImpl+"@1", "sharded-default@1"); ok {
		x := r[0].CoreNsPerOp / r[1].CoreNsPerOp
		add(goal{text: fmt.Sprintf("Sink.Push at 1 producer costs %sx Handle.Push with the same Config (sharded-push vs sharded-default: %s vs %s core-ns; goal <= 1.25x)",
			ratio(x), sig3(r[0].CoreNsPerOp), sig3(r[1].CoreNsPerOp)), met: x <= 1.25})
	}
	if r, _, ok := goalRows(rows, "sharded-notify@64", "sharded-vyukov@64"); ok {
		x := r[0].CoreNsPerOp / r[1].CoreNsPerOp
		add(goal{text: fmt.Sprintf("sharded-notify at 64 producers costs %sx sharded-vyukov (%s vs %s core-ns; goal >= 2x)",
			ratio(x), sig3(r[0].CoreNsPerOp), sig3(r[1].CoreNsPerOp)), met: x >= 2})
	}
	if len(runs) > 1 {
		worst, at := spreadOf(runs)
		if at > 0 {
			add(goal{text: fmt.Sprintf("over %d runs the sharded-push core-ns medians stay within %s of each other at every producer count (widest at %d producers; goal <= 25 %%)",
				len(runs), pctText(worst), at), met: worst <= 0.25})
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
			add(goal{text: "drop % is 0 on every accept-path row of every table (xsync and workiva excepted: their drops are lost races)", met: true})
		} else {
			add(goal{text: "drop % above 0 on " + strings.Join(dropped, ", ")})
		}
	}
	var moved []string
	for _, r := range res.Rows {
		if r.Consumers == "held" && r.ConsumedPct > 0 {
			moved = append(moved, fmt.Sprintf("%s@%d", r.Impl, r.Producers))
		}
	}
	if len(moved) > 0 {
		add(goal{text: "held rows whose consumers took values during a round: " + strings.Join(moved, ", ")})
	}
	return out
}

// isSinkRow says whether a row is the sharded sink in one of its
// configurations, which the lead goal does not count as a rival.
func isSinkRow(impl string) bool { return strings.HasPrefix(impl, "sharded-") }

// leadGoal is the front page's claim at p producers: sharded-push has the
// highest throughput, the lowest core-ns per push and the lowest p99 of
// every rival row (not a sink configuration) with drop % 0. ok is false
// when sharded-push or every rival is missing at p.
func leadGoal(rows []Row, p int) (goal, bool) {
	us, ok := find(rows, stableImpl, p)
	if !ok || us.CoreNsPerOp <= 0 {
		return goal{}, false
	}
	var beaten []string
	rivals := 0
	for _, r := range rows {
		if r.Producers != p || isSinkRow(r.Impl) || r.DropPct > 0 {
			continue
		}
		rivals++
		var lost []string
		if r.ThroughputPerS >= us.ThroughputPerS {
			lost = append(lost, "pushes/s "+perSecond(r.ThroughputPerS))
		}
		if r.CoreNsPerOp <= us.CoreNsPerOp {
			lost = append(lost, "core-ns "+sig3(r.CoreNsPerOp))
		}
		if r.P99Ns <= us.P99Ns {
			lost = append(lost, "p99 "+report.Nanos(r.P99Ns))
		}
		if len(lost) > 0 {
			beaten = append(beaten, r.Impl+" ("+strings.Join(lost, ", ")+")")
		}
	}
	if rivals == 0 {
		return goal{}, false
	}
	text := fmt.Sprintf("at %d producers sharded-push (%s/s, %s core-ns, p99 %s) has the highest pushes/s, the lowest core-ns per push and the lowest p99 of the %d rival rows with drop %% 0",
		p, perSecond(us.ThroughputPerS), sig3(us.CoreNsPerOp), report.Nanos(us.P99Ns), rivals)
	if len(beaten) > 0 {
		text += "; matched or beaten by " + strings.Join(beaten, "; ")
	}
	return goal{text: text, met: len(beaten) == 0}, true
}

// spreadOf is the widest spread, max/min - 1, of the stableImpl medians
// over the runs' headline tables at one producer count, and that count.
func spreadOf(runs []*Result) (worst float64, at int) {
	runs = headlineRuns(runs)
	if len(runs) == 0 {
		return 0, 0
	}
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
		if r, ok := find(rowsOf(res, headline), stableImpl, p); ok && r.CoreNsPerOp > 0 {
			vals = append(vals, r.CoreNsPerOp)
		}
	}
	return vals
}

// writeStability writes producers x runs of the stableImpl medians, with
// the spread of each producer count.
func writeStability(w io.Writer, runs []*Result) error {
	runs = headlineRuns(runs)
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
				line = append(line, sig3(r.CoreNsPerOp))
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

// iterations is the benchfmt iteration count of trial i: its accepted
// pushes, or 1 where the run did not record them.
func iterations(pushes []int64, i int) int64 {
	if i < len(pushes) && pushes[i] > 0 {
		return pushes[i]
	}
	return 1
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
			if !r.Valid {
				name += "/" + report.BenchKey("valid", "no")
			}
			for i, cpu := range r.CPUNsTrials {
				ms := []report.Metric{{Value: cpu, Unit: "cpu-ns/op"}}
				if i < len(r.CoreNsTrials) {
					ms = append(ms, report.Metric{Value: r.CoreNsTrials[i], Unit: "core-ns/op"})
				}
				if i < len(r.ProcCPUNsTrials) {
					ms = append(ms, report.Metric{Value: r.ProcCPUNsTrials[i], Unit: "proc-cpu-ns/op"})
				}
				if i < len(r.ThroughputTrials) {
					ms = append(ms, report.Metric{Value: r.ThroughputTrials[i], Unit: "pushes/s"})
				}
				if i < len(r.ParallelismTrials) {
					ms = append(ms, report.Metric{Value: r.ParallelismTrials[i], Unit: "parallel"})
				}
				if err := report.WriteBenchLine(w, name, iterations(r.PushesTrials, i), ms...); err != nil {
					return err
				}
			}
		}
		for _, r := range res.ShedRows {
			name := "BenchmarkShed/" + report.BenchKey("payload", strconv.Itoa(r.PayloadBytes)) + "/" +
				report.BenchKey("impl", r.Impl) + "/" + report.BenchKey("producers", strconv.Itoa(r.Producers))
			if !r.Valid {
				name += "/" + report.BenchKey("valid", "no")
			}
			for i, cpu := range r.CPUNsTrials {
				ms := []report.Metric{{Value: cpu, Unit: "cpu-ns/op"}}
				if i < len(r.ParallelismTrials) {
					ms = append(ms, report.Metric{Value: r.ParallelismTrials[i], Unit: "parallel"})
				}
				if err := report.WriteBenchLine(w, name, 1, ms...); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
