// Command idle measures what an idle sink costs and how fast it wakes up:
//
//   - idle CPU: the process's CPU time (getrusage: user + system) over
//     -duration while a sink with a no-op Drain sits idle, as a percentage of
//     one core. It includes the Go runtime's own idle work (sysmon, timers),
//     so it is an upper bound on the sink's share.
//   - pickup latency: -samples times, after a random pause of 2 to 4 ms that
//     lets the workers go idle, one value is pushed and the time until Drain
//     sees it is recorded; the median (p50) and p99 are reported, by the rule
//     sorted[round(p*(n-1))]. With -producer block (the default) the pushing
//     goroutine blocks right after the push, as one that goes back to waiting
//     for its next event would, and the woken worker runs on its P. With
//     -producer busy it keeps its P busy until Drain has seen the value, so
//     the worker must be started on another, idle P; that takes the Go
//     scheduler from about 0.1 ms to several ms (it backs off before it
//     steals a goroutine just readied on a running P, and the idle P's thread
//     must be woken by the OS), on a shared machine more, whatever the sink
//     does.
//
// The sink has the default configuration except for -mode (the idle mode:
// wake, the default, or poll, the original's 100 µs polling), -shards
// (default: 4 × GOMAXPROCS clamped to [1, 32]) and -max-delay (the sink's
// MaxDelay, default 0).
//
// With -rate N the run measures a trickle instead: one goroutine pushes N
// values a second, paced by the clock, for -duration, and the run reports
// the Drain calls per second, the mean values per call and the process's
// CPU time as a percentage of one core (the sink, the pacing producer and
// the runtime together).
//
//	go run ./bench/idle -rate 1000 -max-delay 100ms   # about 10 calls/s of about 100 values
//	go run ./bench/idle -rate 1000                    # about 1,000 calls/s of 1
//
// Usage:
//
//	go run ./bench/idle
//	go run ./bench/idle -mode poll -shards 8
//	go run ./bench/idle -format json -duration 10s -samples 1000
//	go run ./bench/idle -trials 5 -format benchfmt   # one line per trial, for benchstat
//
// -trials repeats both measurements on a fresh sink and reports the
// medians; -o writes the file anew after each trial, so a run that fails
// late keeps what it measured; a per-trial watchdog (-row-timeout) ends a
// run whose trial hangs with a goroutine dump and exit status 3.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/shardedsink/shardedsink/bench/internal/report"
	"github.com/shardedsink/shardedsink/sink"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "idle:", err)
		os.Exit(2)
	}
}

// options are the parsed flags.
type options struct {
	format     report.Format
	duration   time.Duration
	samples    int
	mode       sink.IdleMode
	shards     int
	busy       bool
	trials     int
	out        string
	rowTimeout time.Duration
	maxDelay   time.Duration
	rate       int
	from       string
	quiet      bool
	flags      map[string]string
}

// Trial is what one trial measured.
type Trial struct {
	IdleCPUPct  float64 `json:"idle_cpu_pct"`
	PickupP50us float64 `json:"pickup_p50_us"`
	PickupP99us float64 `json:"pickup_p99_us"`
	// The trickle (-rate > 0) instead of the two above.
	CallsPerSec float64 `json:"drain_calls_per_sec,omitempty"`
	MeanBatch   float64 `json:"mean_batch,omitempty"`
	TrickleCPU  float64 `json:"trickle_cpu_pct,omitempty"`
}

// Result is what one run measured; its JSON form is the -format json
// output. The top-level figures are the medians of the trials.
type Result struct {
	Machine     report.Machine `json:"machine"`
	Run         report.Run     `json:"run"`
	Config      Config         `json:"config"`
	IdleCPUPct  float64        `json:"idle_cpu_pct"`
	PickupP50us float64        `json:"pickup_p50_us"`
	PickupP99us float64        `json:"pickup_p99_us"`
	CallsPerSec float64        `json:"drain_calls_per_sec,omitempty"`
	MeanBatch   float64        `json:"mean_batch,omitempty"`
	TrickleCPU  float64        `json:"trickle_cpu_pct,omitempty"`
	Trials      []Trial        `json:"trials"`
	Complete    bool           `json:"complete"` // false while the run is going (-o) or if it failed
}

// Config is the shape of the run (every flag is in Run.Flags too).
type Config struct {
	Mode     string `json:"mode"`
	Shards   int    `json:"shards"` // as the sink resolved it
	Producer string `json:"producer"`
	Duration string `json:"duration"`
	Samples  int    `json:"samples"`
	Trials   int    `json:"trials"`
	MaxDelay string `json:"max_delay"`
	Rate     int    `json:"rate,omitempty"` // values a second of the trickle; 0: the idle run
}

func parse(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("idle", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "markdown", "output format: markdown, json, benchfmt (one line per trial, for benchstat) or readme (with -from: the generated block of docs/benchmarks.md; with -o, replaces that block in the file)")
	from := fs.String("from", "", "measure nothing: render the JSON of earlier -format json runs (comma-separated files or globs, one configuration each), as run.sh does")
	quiet := fs.Bool("q", false, "accepted for symmetry with the other bench commands: this one prints no progress")
	duration := fs.Duration("duration", 5*time.Second, "how long to measure the CPU time of the idle sink")
	samples := fs.Int("samples", 200, "how many values to push into the idle sink for the pickup latency")
	var mode sink.IdleMode
	fs.TextVar(&mode, "mode", sink.IdleWake, "idle mode of the sink: wake (the default) or poll (the original's polling)")
	shards := fs.Int("shards", 0, "shards of the sink; 0 for the default (4 × GOMAXPROCS clamped to [1, 32])")
	producer := fs.String("producer", "block", "what the pushing goroutine does until Drain sees the value: block, or busy (keeps its P)")
	trials := fs.Int("trials", 1, "how many times to measure, each on a fresh sink; the top-level figures are the medians")
	out := fs.String("o", "", "write the output to this file, rewritten after each trial, instead of standard output")
	maxDelay := fs.Duration("max-delay", 0, "the sink's MaxDelay: 0 drains at once, more holds a short batch that long")
	rate := fs.Int("rate", 0, "measure a trickle of this many values a second for -duration instead of the idle sink")
	rowTimeout := fs.Duration("row-timeout", 0, "fail the run loudly (goroutine dump, exit 3) when one trial takes longer; 0 for the default, 4 x duration + 1 minute")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go run ./bench/idle [flags]\n\nMeasures the idle CPU cost of a sink and the latency until Drain sees a value pushed into an idle sink.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	var o options
	var err error
	if o.format, err = report.ParseFormat(*format, report.Markdown, report.JSON, report.Benchfmt, report.Readme); err != nil {
		return options{}, err
	}
	o.from, o.quiet = *from, *quiet
	if o.format == report.Readme && o.from == "" {
		return options{}, fmt.Errorf("-format readme: renders earlier runs, so it needs -from")
	}
	if *duration <= 0 {
		return options{}, fmt.Errorf("-duration: must be positive, got %v", *duration)
	}
	if *samples < 1 {
		return options{}, fmt.Errorf("-samples: must be at least 1, got %d", *samples)
	}
	if *shards < 0 {
		return options{}, fmt.Errorf("-shards: must not be negative, got %d", *shards)
	}
	if *trials < 1 {
		return options{}, fmt.Errorf("-trials: must be at least 1, got %d", *trials)
	}
	if *maxDelay < 0 {
		return options{}, fmt.Errorf("-max-delay: must not be negative, got %v", *maxDelay)
	}
	if *rate < 0 || *rate > 1_000_000 {
		return options{}, fmt.Errorf("-rate: must be in [0, 1000000], got %d", *rate)
	}
	o.maxDelay, o.rate = *maxDelay, *rate
	if *rowTimeout < 0 {
		return options{}, fmt.Errorf("-row-timeout: must not be negative, got %v", *rowTimeout)
	}
	o.mode = mode
	switch *producer {
	case "busy":
		o.busy = true
	case "block":
	default:
		return options{}, fmt.Errorf("-producer: unknown behaviour %q (want busy or block)", *producer)
	}
	o.duration, o.samples, o.shards, o.trials, o.out = *duration, *samples, *shards, *trials, *out
	o.rowTimeout = *rowTimeout
	if o.rowTimeout == 0 {
		o.rowTimeout = 4*o.duration + time.Minute
	}
	o.flags = map[string]string{}
	fs.VisitAll(func(f *flag.Flag) { o.flags[f.Name] = f.Value.String() })
	return o, nil
}

func (o options) producer() string {
	if o.busy {
		return "busy"
	}
	return "block"
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	if o.from != "" {
		return renderFrom(o, stdout)
	}
	command := "go run ./bench/idle"
	if len(args) > 0 {
		command += " " + strings.Join(args, " ")
	}
	rd := report.StartRun(command, o.flags)
	res := Result{Machine: rd.Machine, Run: rd, Trials: []Trial{}, Config: Config{
		Mode: o.mode.String(), Shards: o.shards, Producer: o.producer(), Duration: o.duration.String(), Samples: o.samples, Trials: o.trials,
		MaxDelay: o.maxDelay.String(), Rate: o.rate,
	}}
	wd := &report.Watchdog{Limit: o.rowTimeout}
	for i := range o.trials {
		var tr Trial
		var shards int
		err := wd.Do(fmt.Sprintf("trial %d of %d", i+1, o.trials), func() error {
			var err error
			tr, shards, err = measure(o)
			return err
		})
		if err != nil {
			return err
		}
		res.Config.Shards = shards
		res.Trials = append(res.Trials, tr)
		res.summarize()
		if o.out != "" && i < o.trials-1 {
			if err := emit(res, o, stdout); err != nil {
				return err
			}
		}
	}
	res.Run.Finish()
	res.Complete = true
	return emit(res, o, stdout)
}

// summarize sets the top-level figures to the medians of the trials.
func (r *Result) summarize() {
	var cpu, p50, p99, calls, mean, tcpu []float64
	for _, t := range r.Trials {
		cpu = append(cpu, t.IdleCPUPct)
		p50 = append(p50, t.PickupP50us)
		p99 = append(p99, t.PickupP99us)
		calls = append(calls, t.CallsPerSec)
		mean = append(mean, t.MeanBatch)
		tcpu = append(tcpu, t.TrickleCPU)
	}
	r.IdleCPUPct, r.PickupP50us, r.PickupP99us = report.Median(cpu), report.Median(p50), report.Median(p99)
	r.CallsPerSec, r.MeanBatch, r.TrickleCPU = report.Median(calls), report.Median(mean), report.Median(tcpu)
}

// emit renders res in o's format to -o or stdout.
func emit(res Result, o options, stdout io.Writer) error {
	var buf bytes.Buffer
	var err error
	switch o.format {
	case report.JSON:
		err = report.WriteJSON(&buf, res)
	case report.Benchfmt:
		err = writeBenchfmt(&buf, res)
	default:
		err = writeMarkdown(&buf, res, o)
	}
	if err != nil {
		return err
	}
	if o.out != "" {
		return report.WriteFile(o.out, buf.Bytes())
	}
	_, err = stdout.Write(buf.Bytes())
	return err
}

func writeMarkdown(w io.Writer, r Result, o options) error {
	if o.rate > 0 {
		return writeTrickleMarkdown(w, r, o)
	}
	fmt.Fprintf(w, "Idle sink, %s\n\n", r.Machine)
	if err := report.WriteTable(w,
		[]string{"idle mode", "shards", "max delay", "idle CPU (% of one core)", "pickup p50", "pickup p99"}, nil,
		[][]string{{
			o.mode.String(), fmt.Sprint(r.Config.Shards), o.maxDelay.String(),
			fmt.Sprintf("%.3f %%", r.IdleCPUPct),
			report.Nanos(r.PickupP50us * 1e3), report.Nanos(r.PickupP99us * 1e3),
		}}); err != nil {
		return err
	}
	trials := ""
	if len(r.Trials) > 1 {
		trials = fmt.Sprintf("; medians of %d trials", len(r.Trials))
	}
	_, err := fmt.Fprintf(w, "\nidle CPU over %v; pickup over %d samples, producer %s%s%s\n",
		o.duration, o.samples, o.producer(), trials, loadAverage())
	return err
}

// writeTrickleMarkdown is the table of a -rate run.
func writeTrickleMarkdown(w io.Writer, r Result, o options) error {
	fmt.Fprintf(w, "Trickle of %d values/s, %s\n\n", o.rate, r.Machine)
	if err := report.WriteTable(w,
		[]string{"idle mode", "shards", "max delay", "Drain calls/s", "values per call", "CPU (% of one core)"}, nil,
		[][]string{{
			o.mode.String(), fmt.Sprint(r.Config.Shards), o.maxDelay.String(),
			fmt.Sprintf("%.1f", r.CallsPerSec), fmt.Sprintf("%.1f", r.MeanBatch), fmt.Sprintf("%.3f %%", r.TrickleCPU),
		}}); err != nil {
		return err
	}
	trials := ""
	if len(r.Trials) > 1 {
		trials = fmt.Sprintf("; medians of %d trials", len(r.Trials))
	}
	_, err := fmt.Fprintf(w, "\nover %v%s%s\n", o.duration, trials, loadAverage())
	return err
}

// writeBenchfmt writes one benchfmt line per trial:
//
//	go run golang.org/x/perf/cmd/benchstat@latest -col /mode idle.txt
func writeBenchfmt(w io.Writer, r Result) error {
	if err := report.WriteBenchHeader(w, "github.com/shardedsink/shardedsink/bench/idle", r.Run); err != nil {
		return err
	}
	name := "BenchmarkIdle/" + report.BenchKey("mode", r.Config.Mode) + "/" + report.BenchKey("shards", fmt.Sprint(r.Config.Shards)) +
		"/" + report.BenchKey("producer", r.Config.Producer)
	if r.Config.MaxDelay != "" && r.Config.MaxDelay != "0s" {
		name += "/" + report.BenchKey("maxdelay", r.Config.MaxDelay)
	}
	if r.Config.Rate > 0 {
		name = strings.Replace(name, "BenchmarkIdle/", "BenchmarkTrickle/"+report.BenchKey("rate", fmt.Sprint(r.Config.Rate))+"/", 1)
		for _, t := range r.Trials {
			if err := report.WriteBenchLine(w, name, int64(r.Config.Rate),
				report.Metric{Value: t.CallsPerSec, Unit: "drain-calls/s"},
				report.Metric{Value: t.MeanBatch, Unit: "values/call"},
				report.Metric{Value: t.TrickleCPU, Unit: "cpu-%"}); err != nil {
				return err
			}
		}
		return nil
	}
	for _, t := range r.Trials {
		if err := report.WriteBenchLine(w, name, int64(r.Config.Samples),
			report.Metric{Value: t.IdleCPUPct, Unit: "idle-cpu-%"},
			report.Metric{Value: t.PickupP50us * 1e3, Unit: "pickup-p50-ns"},
			report.Metric{Value: t.PickupP99us * 1e3, Unit: "pickup-p99-ns"}); err != nil {
			return err
		}
	}
	return nil
}

// loadAverage returns "; load average L" from /proc/loadavg, or "" where there
// is none: on a shared machine the pickup latency of a busy producer depends
// on it, since the woken worker needs a second core.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return "; load average (1 min) " + f[0]
	}
	return ""
}
