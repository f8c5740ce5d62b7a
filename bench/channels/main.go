// Command channels measures the mpmc channel against Go channels, row for
// row as the original's table (zruntime's benches/mpmc.rs; section 4 of
// the mpmc reference): single-goroutine rows timed per operation, and crews
// of sender and receiver goroutines timed per run. A "thread" of the
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
//	go run ./bench/channels -format json          # {"machine":{...},"rows":[...]}
//	go run ./bench/channels -trials 21 -items 10000
//
// With -tags zenq -ldflags=-checklinkname=0 the table has a zenq column too
// (github.com/alphadose/zenq/v2, which needs those flags on Go 1.23 and
// later; benchmark only).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"

	"github.com/shardedsink/shardedsink/bench/internal/report"
)

// Result is one row of the JSON output: the median of one case for one
// implementation, in nanoseconds per unit of the case.
type Result struct {
	Case string  `json:"case"`
	Impl string  `json:"impl"`
	NS   float64 `json:"ns"`
}

// Output is the JSON document.
type Output struct {
	Machine report.Machine `json:"machine"`
	Rows    []Result       `json:"rows"`
}

type options struct {
	format report.Format
	trials int
	items  int
	match  *regexp.Regexp
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "channels:", err)
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("channels", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "markdown", "output format: markdown or json")
	trials := fs.Int("trials", 11, "trials per case and implementation; the table shows the median")
	items := fs.Int("items", 10000, "messages per sender (single-goroutine rows: messages per trial)")
	match := fs.String("run", "", "only the cases whose name matches this regular expression")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./bench/channels [flags]\n\n"+
			"Times the mpmc channel against Go channels, row for row as the original's table.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	f, err := report.ParseFormat(*format, report.Markdown, report.JSON)
	if err != nil {
		return err
	}
	if *trials < 1 {
		return fmt.Errorf("-trials: must be at least 1, got %d", *trials)
	}
	if *items < 1 {
		return fmt.Errorf("-items: must be at least 1, got %d", *items)
	}
	re, err := regexp.Compile(*match)
	if err != nil {
		return fmt.Errorf("-run: %w", err)
	}
	opts := options{format: f, trials: *trials, items: *items, match: re}
	out := Output{Machine: report.ReadMachine(), Rows: measure(opts)}
	if f == report.JSON {
		return report.WriteJSON(stdout, out)
	}
	return writeMarkdown(stdout, out, opts)
}

// impls are the implementations of this build, in column order.
func impls() []string { return append([]string{"mpmc", "chan"}, extraImpls...) }

// measure runs every selected case and returns the medians.
func measure(opts options) []Result {
	var results []Result
	for _, r := range rows {
		if !opts.match.MatchString(r.name) {
			continue
		}
		samples := map[string][]float64{}
		for range opts.trials {
			for _, impl := range impls() {
				if ns, ok := r.run(impl, opts.items); ok {
					samples[impl] = append(samples[impl], ns)
				}
			}
		}
		for _, impl := range impls() {
			if s := samples[impl]; len(s) > 0 {
				results = append(results, Result{Case: r.name, Impl: impl, NS: report.Median(s)})
			}
		}
	}
	return results
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
	if _, err := fmt.Fprintf(w, "%s; median of %d trials, %d messages per sender\n\n",
		out.Machine, opts.trials, opts.items); err != nil {
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
