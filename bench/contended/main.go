// Command contended is the contended accept-path harness: it measures what a
// successful push costs when 1 to 256 producers, each on its own locked OS
// thread, push into the sharded sink, the unsharded sink, single shared
// queues and peer libraries, and what a rejected push costs on a full sink.
// It is the measured design decision of docs/design.md; bench/contended/run.sh
// is its command (it adds the zenq row and renders the tables of
// docs/benchmarks.md).
//
// It is the Go port of the original sharded-sink crate's contended harness
// and keeps its method:
//
//   - Every producer runs on its own OS thread (runtime.LockOSThread), waits
//     at a barrier, makes items/10 warm-up pushes, then items timed pushes
//     between two readings of its thread's CPU clock
//     (CLOCK_THREAD_CPUTIME_ID). cpu ns/op is the producers' CPU time over
//     their accepted timed pushes: it counts the cycles lost in CAS retries
//     and cache misses but not the time a producer waits for a core, which
//     with 256 threads on 2 cores is most of the wall clock. Process CPU
//     per accepted push (getrusage) adds every other thread: workers,
//     consumers, the garbage collector, the scheduler.
//   - Rings are sized to hold the whole burst, so every push is accepted and
//     only the accept path is measured; the drop % column proves it. A
//     sharded sink gets ceil(producers/shards) * (items + items/10) + 1024
//     slots per shard, a 1-shard sink or a single queue
//     producers * (items + items/10) + 1024.
//   - Each row allocates and pre-touches its rings once (a queue that rounds
//     its capacity up is pre-touched to the rounded capacity) and reuses
//     them; each trial builds a fresh sink (or consumer) on them and
//     collects the garbage before its producers start. The table shows the
//     median, minimum and maximum over -trials trials. Throughput is
//     accepted timed pushes per second of wall clock, from the first
//     producer's timed phase starting to the last one's ending.
//   - A separate run times each push with the wall clock for p99, p99.9 and
//     max, by the rule sorted[round(p*(n-1))].
//   - -consumers held: nobody pops during a trial (sink workers wait in a
//     Drain call on a gate, entered before the producers start; queues have
//     no consumer until the producers are done): the push path alone.
//     -consumers draining: consumers pop meanwhile under one policy (up to
//     256 values, yield, sleep 100 µs when empty; sink rows in IdlePoll
//     mode, whose workers do exactly that).
//   - -payload 8 pushes a uint64, -payload 32 a 32-byte record.
//
// The shed table fills every ring of a sharded sink (its drain blocked) and
// measures the CPU cost of a push that is rejected and counted.
//
// Usage:
//
//	bash bench/contended/run.sh                      # the committed measurement (RUNS=3 for the stability check)
//	go run ./bench/contended [flags]
//	go run ./bench/contended -consumers held,draining -payload 8,32 -format json -o run.json
//	go run ./bench/contended -tables held/8,held/32,draining/8 -format json -o run.json   # run.sh's tables
//	go run ./bench/contended -from run.json -format readme
//	go run ./bench/contended -from 'bench/contended/runs/*.json' -format benchfmt > runs.txt
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shardedsink/shardedsink/bench/internal/report"
	"github.com/shardedsink/shardedsink/internal/machine"
	"github.com/shardedsink/shardedsink/sink"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "contended:", err)
		os.Exit(2)
	}
}

// options are the parsed flags.
type options struct {
	producers  []int
	window     time.Duration
	round      int
	trials     int
	shards     int
	impls      []string
	consumers  []consumerMode
	payloads   []int
	tables     []tableKey // what is measured, in order: -tables, or -consumers x -payload
	shed       bool
	format     report.Format
	out        string
	quiet      bool
	from       string
	rowTimeout time.Duration
	idle       sink.IdleMode
	realtime   bool
	flags      map[string]string // every flag and its value, for the JSON
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("contended", flag.ContinueOnError)
	fs.SetOutput(stderr)
	producers := fs.String("producers", "1,4,64", "comma-separated producer counts (one locked OS thread each); run.sh measures 1,4,16,64,128,256")
	window := fs.Duration("window", 50*time.Millisecond, "measured time per trial, in rounds in which every producer pushes until the round's budget is spent; run.sh measures 200ms")
	round := fs.Int("round", 1<<20, "pushes per round: every ring and queue of a row holds this many (plus 2,048), so held rows never fill; the rings are emptied between rounds")
	trials := fs.Int("trials", 3, "trials per row; the tables show the median, minimum and maximum; run.sh measures 5")
	shards := fs.Int("shards", 4, "shards of the sharded sink rows (sharded-default uses the sink's default)")
	implList := fs.String("impls", "", "comma-separated rows to run (default all): "+strings.Join(implNames(), ","))
	consumers := fs.String("consumers", "held", "what consumers do during a trial, comma-separated for several tables: held (nobody pops) or draining (everyone pops under one policy)")
	payloads := fs.String("payload", "8", "payload bytes per push, comma-separated for several tables: 8 (a uint64) or 32 (a 32-byte record)")
	tableList := fs.String("tables", "", "the tables to measure, in order, as consumers/payload pairs (held/8,held/32,draining/8); overrides the product of -consumers and -payload")
	shed := fs.Bool("shed", true, "also measure the shed path (rejected pushes on a full sink) for the sharded rows with a backend, at the first payload")
	format := fs.String("format", "summary", "output format: summary (the front page's table for this run and its goals), markdown (every table, every column), json, svg, benchfmt (one line per trial, for benchstat) readme (the generated block of docs/benchmarks.md; with -o, replaces that block in the file) headline (the README's table; with -o, replaces that block) or manycore (the front page's table for a run on a machine of more cores, for docs/benchmarks.md; with -o, replaces that block)")
	out := fs.String("o", "", "write the output to this file, rewritten as each row finishes, instead of standard output")
	quiet := fs.Bool("q", false, "do not print progress to standard error")
	from := fs.String("from", "", "measure nothing: render the JSON of earlier -format json runs (comma-separated files or globs; the last file is the one tabulated, all of them make the stability table)")
	var idle sink.IdleMode
	fs.TextVar(&idle, "idle", sink.IdlePoll, "idle mode of the sink rows' workers when draining: poll (the common policy of every row: sleep 100 µs when empty) or wake (the sink's default doorbell, as the harness had it before; sharded-default always has it)")
	realtime := fs.Bool("realtime", true, "run the producers' threads of held and shed rows under SCHED_RR where the process may (root or CAP_SYS_NICE): Linux then gives them a core each at once, where its default policy may leave two on one core for milliseconds; the rows say which policy ran")
	rowTimeout := fs.Duration("row-timeout", 10*time.Minute, "fail the run loudly (goroutine dump, exit 3) when one row takes longer; 0 turns the watchdog off")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: go run ./bench/contended [flags]\n\n"+
			"Measures the contended accept path (and the shed path) of the sink, single queues and peers.\n"+
			"The committed measurement is bash bench/contended/run.sh (it adds the zenq row).\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	o := &options{window: *window, round: *round, trials: *trials, shards: *shards, shed: *shed, out: *out, quiet: *quiet, from: *from,
		rowTimeout: *rowTimeout, idle: idle, realtime: *realtime, flags: map[string]string{}}
	fs.VisitAll(func(f *flag.Flag) { o.flags[f.Name] = f.Value.String() })
	var err error
	if o.producers, err = parseCounts("-producers", *producers); err != nil {
		return nil, err
	}
	if o.window < time.Millisecond {
		return nil, fmt.Errorf("-window: need at least 1ms, got %v", o.window)
	}
	if o.round < chunk {
		return nil, fmt.Errorf("-round: need at least %d pushes (one chunk), got %d", chunk, o.round)
	}
	if o.trials < 1 {
		return nil, fmt.Errorf("-trials: need at least 1, got %d", o.trials)
	}
	if o.shards < 1 {
		return nil, fmt.Errorf("-shards: need at least 1, got %d", o.shards)
	}
	if o.rowTimeout < 0 {
		return nil, fmt.Errorf("-row-timeout: must not be negative, got %v", o.rowTimeout)
	}
	if o.impls, err = selectNames(*implList); err != nil {
		return nil, err
	}
	for _, s := range splitList(*consumers) {
		m, err := parseConsumerMode(s)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(o.consumers, m) {
			o.consumers = append(o.consumers, m)
		}
	}
	if len(o.consumers) == 0 {
		return nil, fmt.Errorf("-consumers: no mode in %q (want held, draining or both)", *consumers)
	}
	if o.payloads, err = parseCounts("-payload", *payloads); err != nil {
		return nil, err
	}
	for _, p := range o.payloads {
		if p != 8 && p != 32 {
			return nil, fmt.Errorf("-payload: %d bytes is not offered (want 8 or 32)", p)
		}
	}
	if strings.TrimSpace(*tableList) == "" {
		for _, m := range o.consumers {
			for _, p := range o.payloads {
				o.tables = append(o.tables, tableKey{m.String(), p})
			}
		}
	} else {
		o.consumers, o.payloads = nil, nil
		for _, f := range splitList(*tableList) {
			ms, ps, ok := strings.Cut(f, "/")
			m, err := parseConsumerMode(ms)
			p, perr := strconv.Atoi(ps)
			if !ok || err != nil || perr != nil || (p != 8 && p != 32) {
				return nil, fmt.Errorf("-tables: %q is not consumers/payload (held/8, held/32, draining/8 or draining/32)", f)
			}
			k := tableKey{m.String(), p}
			if slices.Contains(o.tables, k) {
				continue
			}
			o.tables = append(o.tables, k)
			if !slices.Contains(o.consumers, m) {
				o.consumers = append(o.consumers, m)
			}
			if !slices.Contains(o.payloads, p) {
				o.payloads = append(o.payloads, p)
			}
		}
	}
	if o.format, err = report.ParseFormat(*format, report.Summary, report.Markdown, report.JSON, report.SVG, report.Benchfmt, report.Readme, report.Headline, report.ManyCore); err != nil {
		return nil, err
	}
	return o, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parseCounts parses a comma-separated list of positive integers.
func parseCounts(flagName, s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s: %q is not a positive count", flagName, f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no counts in %q", flagName, s)
	}
	return out, nil
}

// run is the whole command, testable: flags in, output to stdout (or -o),
// progress to stderr.
func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	progress := stderr
	if o.quiet {
		progress = io.Discard
	}
	if o.from != "" {
		runs, err := readResults(o.from)
		if err != nil {
			return err
		}
		return emit(o, runs, stdout)
	}
	res, err := measureAll(o, args, progress, func(partial *Result) error {
		if o.out == "" || o.format == report.Readme || o.format == report.Headline {
			return nil // standard output and the markdown block get the finished run only
		}
		return emit(o, []*Result{partial}, stdout)
	})
	if err != nil {
		return err
	}
	return emit(o, []*Result{res}, stdout)
}

// emit renders runs in o's format and writes it to -o or stdout.
func emit(o *options, runs []*Result, stdout io.Writer) error {
	var buf bytes.Buffer
	if err := render(&buf, o.format, runs); err != nil {
		return err
	}
	if o.out == "" {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	if o.format == report.Readme {
		return replaceReadmeBlock(o.out, buf.String())
	}
	if o.format == report.Headline {
		return report.ReplaceBlock(o.out, headlineBegin, headlineEnd, buf.String())
	}
	if o.format == report.ManyCore {
		return report.ReplaceBlock(o.out, manyCoreBegin, manyCoreEnd, buf.String())
	}
	return report.WriteFile(o.out, buf.Bytes())
}

// render writes runs in format f. The tables come from the last run; the
// stability table and benchfmt use all of them.
func render(w io.Writer, f report.Format, runs []*Result) error {
	last, _ := combined(runs)
	switch f {
	case report.JSON:
		return report.WriteJSON(w, last)
	case report.SVG:
		return writeSVG(w, last)
	case report.Benchfmt:
		return writeBenchfmt(w, runs)
	case report.Readme:
		return writeReadme(w, runs)
	case report.Headline:
		return writeHeadline(w, medianRun(headlineRuns(runs), last), headlineRuns(runs), last)
	case report.Summary:
		return writeSummary(w, last)
	case report.ManyCore:
		return writeManyCore(w, last)
	default:
		return writeMarkdown(w, runs)
	}
}

// readResults reads the Results that -format json wrote, from a
// comma-separated list of files and globs, in list order (each glob's
// matches sorted), so that every format can be rendered from the same
// measurements.
func readResults(list string) ([]*Result, error) {
	paths, err := report.FromPaths(list)
	if err != nil {
		return nil, err
	}
	var out []*Result
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var res Result
		if err := json.Unmarshal(data, &res); err != nil {
			return nil, fmt.Errorf("-from %s: %w", p, err)
		}
		if len(res.Rows) == 0 {
			return nil, fmt.Errorf("-from %s: no rows", p)
		}
		fillCoreNs(&res)
		out = append(out, &res)
	}
	return out, nil
}

// measureAll runs every selected row at every producer count, for every
// consumer mode and payload, then the shed table; after each row it hands
// the partial result to written.
func measureAll(o *options, args []string, progress io.Writer, written func(*Result) error) (*Result, error) {
	command := "go run"
	if buildFlags != "" {
		command += " " + buildFlags
	}
	command += " ./bench/contended"
	if len(args) > 0 {
		command += " " + strings.Join(args, " ")
	}
	res := &Result{
		Run: report.StartRun(command, o.flags),
		Config: Config{
			WindowNs: o.window.Nanoseconds(), Round: o.round, Trials: o.trials, Shards: o.shards, Producers: o.producers,
			Impls: o.impls, Payloads: o.payloads, Idle: o.idle.String(), Homes: homes(), Realtime: o.realtime,
		},
		Rows:     []Row{},
		ShedRows: []ShedRow{},
		Caveats:  map[string]string{},
	}
	for _, m := range o.consumers {
		res.Config.Consumers = append(res.Config.Consumers, m.String())
	}
	for _, k := range o.tables {
		res.Config.Tables = append(res.Config.Tables, k.consumers+"/"+strconv.Itoa(k.payload))
	}
	sinkIdle = o.idle
	wd := &report.Watchdog{Limit: o.rowTimeout}
	for _, k := range o.tables {
		mode, _ := parseConsumerMode(k.consumers)
		var err error
		if k.payload == 8 {
			err = measureTable(impls[uint64](), o, mode, res, wd, progress, written)
		} else {
			err = measureTable(impls[Event](), o, mode, res, wd, progress, written)
		}
		if err != nil {
			return nil, err
		}
	}
	if o.shed {
		var err error
		if o.payloads[0] == 8 {
			err = measureShedTable(impls[uint64](), o, res, wd, progress, written)
		} else {
			err = measureShedTable(impls[Event](), o, res, wd, progress, written)
		}
		if err != nil {
			return nil, err
		}
	}
	res.Run.Finish()
	res.Complete = true
	return res, nil
}

// measureTable measures one table: every selected row family at every
// producer count, for one consumer mode and payload type.
func measureTable[T any](all []*impl[T], o *options, mode consumerMode, res *Result, wd *report.Watchdog,
	progress io.Writer, written func(*Result) error) error {
	for _, im := range all {
		if !slices.Contains(o.impls, im.name) || im.drainingOnly && mode == held {
			continue
		}
		capped := false
		for _, p := range o.producers {
			sz := sizing{producers: p, window: o.window, round: o.round, shards: o.shards, realtime: o.realtime && mode == held}
			if im.maxRound > 0 && sz.round > im.maxRound {
				sz.round, capped = im.maxRound, true
			}
			name := fmt.Sprintf("row %s, %d producers, consumers %s, %d-byte payload", im.name, p, mode, payloadBytes[T]())
			var row Row
			err := wd.Do(name, func() error {
				var err error
				row, err = measure(im, sz, mode, o.trials)
				return err
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(progress, "%-8s %2dB %-17s producers %4d  cpu %7s ns/op (%s-%s)  proc %7s  drop %5s %%  %9s/s  p99 %8s  p99.9 %8s  par %.2f%s overlap %.2f  rounds %s  gc %d  faults %d  consumed %s %%  %s\n",
				row.Consumers, row.PayloadBytes, row.Impl, row.Producers, sig3(row.CPUNsPerOp), sig3(row.CPUNsMin), sig3(row.CPUNsMax),
				sig3(row.ProcCPUNsPerOp), pct(row.DropPct), perSecond(row.ThroughputPerS),
				report.Nanos(row.P99Ns), report.Nanos(row.P999Ns), row.Parallelism, invalidMark(row.Valid, row.ParallelismFloor), row.Overlap,
				sig3(row.Rounds), row.Counters.GCCycles, row.Counters.MinorFaults, pct(row.ConsumedPct), row.Scheduler)
			res.Rows = append(res.Rows, row)
			if err := written(res); err != nil {
				return err
			}
		}
		if c := caveatFor(im, o, capped); c != "" {
			res.Caveats[im.name] = c
		}
	}
	return nil
}

// measureShedTable measures the shed path of the selected sharded rows.
func measureShedTable[T any](all []*impl[T], o *options, res *Result, wd *report.Watchdog,
	progress io.Writer, written func(*Result) error) error {
	for _, im := range all {
		if im.backend == nil || !slices.Contains(o.impls, im.name) {
			continue
		}
		for _, p := range o.producers {
			sz := sizing{producers: p, window: o.window, round: o.round, shards: o.shards, realtime: o.realtime}
			var row ShedRow
			err := wd.Do(fmt.Sprintf("shed row %s, %d producers", im.name, p), func() error {
				var err error
				row, err = measureShed(im, sz, o.trials)
				return err
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(progress, "shed %-12s producers %4d  cpu %8s ns/op  rejected %s %%  par %.2f%s\n",
				row.Impl, row.Producers, sig3(row.CPUNsPerOp), pct(row.RejectedPct), row.Parallelism, invalidMark(row.Valid, row.ParallelismFloor))
			res.ShedRows = append(res.ShedRows, row)
			if err := written(res); err != nil {
				return err
			}
		}
	}
	return nil
}

// invalidMark is what the progress line adds to an invalid row's
// parallelism.
func invalidMark(valid bool, floor float64) string {
	if valid {
		return ""
	}
	return fmt.Sprintf(" INVALID (< %.2f)", floor)
}

// caveatFor joins a row family's fixed caveat, what the run observed, and
// the round cap it needed.
func caveatFor[T any](im *impl[T], o *options, capped bool) string {
	parts := []string{}
	if im.caveat != "" {
		parts = append(parts, im.caveat)
	}
	if im.notes != nil {
		parts = append(parts, im.notes()...)
	}
	if capped {
		parts = append(parts, fmt.Sprintf("rounds of %d pushes instead of %d, to fit the ring limit", im.maxRound, o.round))
	}
	return strings.Join(parts, "; ")
}

// homes says how Sink.Push chooses its ring on this machine: "cpu" where
// it reads the CPU number (linux/amd64 with RDPID), "stack" elsewhere.
func homes() string {
	if machine.CPUReadable() {
		return "cpu"
	}
	return "stack"
}
