// Command channels measures the mpmc channel against Go channels, row for
// row as the original's table (zruntime's benches/mpmc.rs; section 4 of
// the mpmc reference): single-goroutine rows timed per operation, and crews
// of sender and receiver goroutines timed per run, and one row of our own
// (the unbounded crew of goroutines, last). A "thread" of the
// original is a goroutine locked to its OS thread (runtime.LockOSThread); a
// "task" is a plain goroutine. Each sender sends -items messages, and the
// receivers share them equally. For the unbounded rows the Go channel gets
// a buffer that holds every message.
//
// Every trial runs every implementation of a row before the next trial, so
// that drift on a shared machine hits them alike; the table shows the
// median over -trials.
//
//	go run ./bench/channels                       # markdown table
//	go run ./bench/channels -format json          # {"machine":{...},"run":{...},"config":{...},"rows":[...],"complete":true}
//	go run ./bench/channels -format benchfmt      # one line per trial, for benchstat
//	go run ./bench/channels -trials 21 -items 10000 -o channels.md
//
// Progress goes to standard error (-q silences it). -o writes the file anew
// as each case finishes, so a run that fails late keeps what it measured. A
// per-case watchdog (-row-timeout) ends a run whose case hangs (zenq crews
// with several readers can stall for good) with a goroutine dump and exit
// status 3 instead of hanging.
//
// With -tags zenq -ldflags=-checklinkname=0 the table has a zenq column too
// (github.com/alphadose/zenq/v2, which needs those flags on Go 1.23 and
// later; benchmark only).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/shardedsink/shardedsink/bench/internal/report"
)

// Result is one row of the JSON output: the median of one case for one
// implementation, in nanoseconds per unit of the case, and every trial.
type Result struct {
	Case     string    `json:"case"`
	Impl     string    `json:"impl"`
	NS       float64   `json:"ns"`
	Unit     string    `json:"unit"` // what ns counts: op, round, run or msg
	TrialsNS []float64 `json:"trials_ns"`
}

// Output is the JSON document.
type Output struct {
	Machine  report.Machine `json:"machine"`
	Run      report.Run     `json:"run"`
	Config   Config         `json:"config"`
	Rows     []Result       `json:"rows"`
	Complete bool           `json:"complete"` // false while the run is still going (-o) or if it failed
}

// Config is the shape of the run (every flag is in Run.Flags too).
type Config struct {
	Trials int      `json:"trials"`
	Items  int      `json:"items"`
	Impls  []string `json:"impls"`
}

type options struct {
	format     report.Format
	trials     int
	items      int
	match      *regexp.Regexp
	out        string
	quiet      bool
	rowTimeout time.Duration
	flags      map[string]string
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "channels:", err)
		os.Exit(2)
	}
}

func parse(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("channels", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "markdown", "output format: markdown, json or benchfmt (one line per trial, for benchstat)")
	trials := fs.Int("trials", 11, "trials per case and implementation; the table shows the median")
	items := fs.Int("items", 10000, "messages per sender (single-goroutine rows: messages per trial)")
	match := fs.String("run", "", "only the cases whose name matches this regular expression")
	out := fs.String("o", "", "write the output to this file, rewritten as each case finishes, instead of standard output")
	quiet := fs.Bool("q", false, "do not print progress to standard error")
	rowTimeout := fs.Duration("row-timeout", 2*time.Minute, "fail the run loudly (goroutine dump, exit 3) when one case takes longer; 0 turns the watchdog off")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./bench/channels [flags]\n\n"+
			"Times the mpmc channel against Go channels, row for row as the original's table.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	f, err := report.ParseFormat(*format, report.Markdown, report.JSON, report.Benchfmt)
	if err != nil {
		return options{}, err
	}
	if *trials < 1 {
		return options{}, fmt.Errorf("-trials: must be at least 1, got %d", *trials)
	}
	if *items < 1 {
		return options{}, fmt.Errorf("-items: must be at least 1, got %d", *items)
	}
	if *rowTimeout < 0 {
		return options{}, fmt.Errorf("-row-timeout: must not be negative, got %v", *rowTimeout)
	}
	re, err := regexp.Compile(*match)
	if err != nil {
		return options{}, fmt.Errorf("-run: %w", err)
	}
	o := options{format: f, trials: *trials, items: *items, match: re, out: *out, quiet: *quiet, rowTimeout: *rowTimeout,
		flags: map[string]string{}}
	fs.VisitAll(func(fl *flag.Flag) { o.flags[fl.Name] = fl.Value.String() })
	return o, nil
}

func run(args []string, stdout, stderr io.Writer) error {
	opts, err := parse(args, stderr)
	if err != nil {
		return err
	}
	progress := stderr
	if opts.quiet {
		progress = io.Discard
	}
	command := "go run ./bench/channels"
	if len(args) > 0 {
		command += " " + strings.Join(args, " ")
	}
	r := report.StartRun(command, opts.flags)
	out := Output{Machine: r.Machine, Run: r, Config: Config{Trials: opts.trials, Items: opts.items, Impls: impls()}, Rows: []Result{}}
	wd := &report.Watchdog{Limit: opts.rowTimeout}
	err = measure(opts, wd, progress, func(rows []Result) error {
		out.Rows = rows
		if opts.out == "" {
			return nil
		}
		return emit(out, opts, stdout)
	})
	if err != nil {
		return err
	}
	out.Run.Finish()
	out.Complete = true
	return emit(out, opts, stdout)
}

// emit renders out in the chosen format to -o or stdout.
func emit(out Output, opts options, stdout io.Writer) error {
	var buf bytes.Buffer
	var err error
	switch opts.format {
	case report.JSON:
		err = report.WriteJSON(&buf, out)
	case report.Benchfmt:
		err = writeBenchfmt(&buf, out)
	default:
		err = writeMarkdown(&buf, out, opts)
	}
	if err != nil {
		return err
	}
	if opts.out != "" {
		return report.WriteFile(opts.out, buf.Bytes())
	}
	_, err = stdout.Write(buf.Bytes())
	return err
}

// impls are the implementations of this build, in column order.
func impls() []string { return append([]string{"mpmc", "chan"}, extraImpls...) }

// measure runs every selected case, each under the watchdog, and hands the
// medians so far to done after each case.
func measure(opts options, wd *report.Watchdog, progress io.Writer, done func([]Result) error) error {
	results := []Result{}
	for _, r := range rows {
		if !opts.match.MatchString(r.name) {
			continue
		}
		samples := map[string][]float64{}
		err := wd.Do("case "+r.name, func() error {
			for range opts.trials {
				for _, impl := range impls() {
					if ns, ok := r.run(impl, opts.items); ok {
						samples[impl] = append(samples[impl], ns)
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		var line []string
		for _, impl := range impls() {
			if s := samples[impl]; len(s) > 0 {
				res := Result{Case: r.name, Impl: impl, NS: report.Median(s), Unit: unitOf(r), TrialsNS: s}
				results = append(results, res)
				line = append(line, impl+" "+report.Nanos(res.NS))
			}
		}
		fmt.Fprintf(progress, "%-28s %s (per %s, median of %d)\n", r.name, strings.Join(line, "  "), unitOf(r), opts.trials)
		if err := done(results); err != nil {
			return err
		}
	}
	return nil
}

// unitOf is what a case's ns counts.
func unitOf(r row) string {
	if r.unit == "" {
		return "run"
	}
	return r.unit
}

// writeBenchfmt writes one benchfmt line per trial of every case and
// implementation:
//
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl channels.txt
func writeBenchfmt(w io.Writer, out Output) error {
	if err := report.WriteBenchHeader(w, "github.com/shardedsink/shardedsink/bench/channels", out.Run); err != nil {
		return err
	}
	for _, r := range out.Rows {
		name := "BenchmarkChannels/" + report.BenchKey("case", r.Case) + "/" + report.BenchKey("impl", r.Impl)
		for _, ns := range r.TrialsNS {
			if err := report.WriteBenchLine(w, name, 1, report.Metric{Value: ns, Unit: "ns/" + r.Unit}); err != nil {
				return err
			}
		}
	}
	return nil
}

func writeMarkdown(w io.Writer, out Output, opts options) error {
	ns := map[[2]string]float64{}
	for _, r := range out.Rows {
		ns[[2]string{r.Case, r.Impl}] = r.NS
	}
	header := append([]string{"case", "what is timed", "mpmc", "chan", "mpmc/chan"}, extraImpls...)
	align := []bool{false, false, true, true, true}
	for range extraImpls {
		align = append(align, true)
	}
	var table [][]string
	for _, r := range rows {
		m, okM := ns[[2]string{r.name, "mpmc"}]
		c, okC := ns[[2]string{r.name, "chan"}]
		if !okM && !okC {
			continue
		}
		line := []string{r.name, r.what + perUnit(r.unit), cell(m, okM), cell(c, okC), ratio(m, okM, c, okC)}
		for _, impl := range extraImpls {
			v, ok := ns[[2]string{r.name, impl}]
			line = append(line, cell(v, ok))
		}
		table = append(table, line)
	}
	state := ""
	if !out.Complete {
		state = " (incomplete: the run has not finished)"
	}
	if _, err := fmt.Fprintf(w, "%s; median of %d trials, %d messages per sender; load average %s before%s\n\n",
		out.Machine, opts.trials, opts.items, report.FormatLoad(out.Run.LoadBefore), state); err != nil {
		return err
	}
	return report.WriteTable(w, header, align, table)
}

func perUnit(unit string) string {
	switch unit {
	case "op":
		return " (per op)"
	case "round":
		return " (per round)"
	case "msg":
		return " (per message)"
	}
	return " (whole run)"
}

func cell(ns float64, ok bool) string {
	if !ok {
		return "–"
	}
	return report.Nanos(ns)
}

func ratio(m float64, okM bool, c float64, okC bool) string {
	if !okM || !okC || c == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2fx", m/c)
}
