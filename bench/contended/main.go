// Command contended is the contended accept-path harness: it measures what a
// successful push costs when 1 to 256 producers, each on its own locked OS
// thread, push into the sharded sink, the unsharded sink, single shared
// queues and peer libraries, and what a rejected push costs on a full sink.
//
// It is the Go port of the original sharded-sink crate's contended harness
// and keeps its method:
//
//   - Every producer runs on its own OS thread (runtime.LockOSThread), waits
//     at a barrier, makes items/10 warm-up pushes, then items timed pushes
//     between two readings of its thread's CPU clock
//     (CLOCK_THREAD_CPUTIME_ID). cpu ns/op is Δcpu/items averaged over the
//     producers: it counts the cycles lost in CAS retries and cache misses
//     but not the time a producer waits for a core, which with 256 threads
//     on 2 cores is most of the wall clock.
//   - Rings are sized to hold the whole burst, so every push is accepted and
//     only the accept path is measured; the drop % column proves it. A
//     sharded sink gets ceil(producers/shards) * (items + items/10) + 1024
//     slots per shard, a 1-shard sink or a single queue
//     producers * (items + items/10) + 1024.
//   - Each trial uses a fresh instance; the table shows the median of the
//     trials. Throughput is accepted timed pushes per second of wall clock,
//     from the first producer's timed phase starting to the last one's
//     ending.
//   - A separate run on another fresh instance times each push with the
//     wall clock for p99, p99.9 and max, by the rule sorted[round(p*(n-1))].
//   - Sink rows: shards shards, a Handle per producer (round-robin), work
//     stealing off, a no-op drain, the overload monitor at 1 h. Every other
//     row has one consumer goroutine, as a sink shard has its worker.
//
// The shed table fills every ring of a sharded sink (its drain blocked) and
// measures the CPU cost of a push that is rejected and counted.
//
// Usage:
//
//	go run ./bench/contended [flags]
//	go run ./bench/contended -format json
//	go run ./bench/contended -format json -o run.json
//	go run ./bench/contended -from run.json -format svg -o bench/contended/contended.svg
//	go run -tags zenq -ldflags=-checklinkname=0 ./bench/contended -impls sharded-zenq,sharded-vyukov
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/shardedsink/shardedsink/bench/internal/report"
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
	producers []int
	items     int
	trials    int
	shards    int
	impls     []*impl
	shed      bool
	format    report.Format
	out       string
	quiet     bool
	idle      sink.IdleMode
	from      string
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("contended", flag.ContinueOnError)
	fs.SetOutput(stderr)
	producers := fs.String("producers", "1,4,16,64,128,256", "comma-separated producer counts (one locked OS thread each)")
	items := fs.Int("items", 20000, "timed pushes per producer (plus items/10 warm-up pushes)")
	trials := fs.Int("trials", 3, "trials per row; the table shows medians")
	shards := fs.Int("shards", 4, "shards of the sharded sink rows")
	implList := fs.String("impls", "", "comma-separated rows to run (default all): "+strings.Join(implNames(impls()), ","))
	shed := fs.Bool("shed", true, "also measure the shed path (rejected pushes on a full sink) for the selected sharded rows")
	format := fs.String("format", "markdown", "output format: markdown, json or svg")
	out := fs.String("o", "", "write the output to this file instead of standard output")
	quiet := fs.Bool("q", false, "do not print progress to standard error")
	from := fs.String("from", "", "measure nothing: render the JSON that an earlier -format json run wrote to this file")
	var idle sink.IdleMode
	fs.TextVar(&idle, "idle", sink.IdleWake, "idle mode of the sink rows: wake (the sink's default) or poll (the original's 100 µs polling)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: go run ./bench/contended [flags]\n\n"+
			"Measures the contended accept path (and the shed path) of the sink, single queues and peers.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	o := &options{items: *items, trials: *trials, shards: *shards, shed: *shed, out: *out, quiet: *quiet, from: *from, idle: idle}
	var err error
	if o.producers, err = parseCounts(*producers); err != nil {
		return nil, err
	}
	if o.items < 10 {
		return nil, fmt.Errorf("-items: need at least 10, got %d", o.items)
	}
	if o.trials < 1 {
		return nil, fmt.Errorf("-trials: need at least 1, got %d", o.trials)
	}
	if o.shards < 1 {
		return nil, fmt.Errorf("-shards: need at least 1, got %d", o.shards)
	}
	if o.impls, err = selectImpls(*implList); err != nil {
		return nil, err
	}
	if o.format, err = report.ParseFormat(*format, report.Markdown, report.JSON, report.SVG); err != nil {
		return nil, err
	}
	return o, nil
}

// parseCounts parses a comma-separated list of positive integers.
func parseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-producers: %q is not a positive count", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-producers: no counts in %q", s)
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
	var res *Result
	if o.from != "" {
		res, err = readResult(o.from)
	} else {
		res, err = measureAll(o, args, progress)
	}
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	switch o.format {
	case report.JSON:
		err = report.WriteJSON(&buf, res)
	case report.SVG:
		err = writeSVG(&buf, res)
	default:
		err = writeMarkdown(&buf, res)
	}
	if err != nil {
		return err
	}
	if o.out != "" {
		return os.WriteFile(o.out, buf.Bytes(), 0o644)
	}
	_, err = stdout.Write(buf.Bytes())
	return err
}

// readResult reads a Result that -format json wrote, so that the markdown
// table and the chart can be rendered from the same measurement.
func readResult(path string) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var res Result
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, fmt.Errorf("-from %s: %w", path, err)
	}
	return &res, nil
}

// measureAll runs every selected row at every producer count, then the shed
// table.
func measureAll(o *options, args []string, progress io.Writer) (*Result, error) {
	command := "go run"
	if buildFlags != "" {
		command += " " + buildFlags
	}
	command += " ./bench/contended"
	if len(args) > 0 {
		command += " " + strings.Join(args, " ")
	}
	sinkIdle = o.idle
	res := &Result{
		Machine: report.ReadMachine(),
		Config: Config{
			Command: command, Items: o.items, Trials: o.trials, Shards: o.shards, Producers: o.producers,
			Idle: o.idle.String(),
		},
		Rows:     []Row{},
		ShedRows: []ShedRow{},
		Caveats:  map[string]string{},
	}
	for _, im := range o.impls {
		capped := map[int]int{}
		for _, p := range o.producers {
			sz := sizing{producers: p, per: o.items, shards: o.shards}
			if im.maxPer != nil {
				if m := im.maxPer(p, o.shards); m < sz.per {
					sz.per = m
					capped[p] = m
				}
			}
			row, err := measure(im, sz, o.trials)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(progress, "%-17s producers %4d  items %6d  cpu %8s ns/op  drop %6s %%  %s/s  p99 %s  p99.9 %s  max %s\n",
				row.Impl, row.Producers, row.items, sig3(row.CPUNsPerOp), pct(row.DropPct), perSecond(row.ThroughputPerS),
				report.Nanos(row.P99Ns), report.Nanos(row.P999Ns), report.Nanos(row.MaxNs))
			res.Rows = append(res.Rows, row)
		}
		if c := caveatFor(im, o, capped); c != "" {
			res.Caveats[im.name] = c
		}
	}
	if o.shed {
		for _, im := range o.impls {
			if im.backend == nil {
				continue
			}
			for _, p := range o.producers {
				row, err := measureShed(im, shedSizing(p, o), o.trials)
				if err != nil {
					return nil, err
				}
				fmt.Fprintf(progress, "shed %-12s producers %4d  cpu %8s ns/op  rejected %s %%\n",
					row.Impl, row.Producers, sig3(row.CPUNsPerOp), pct(row.RejectedPct))
				res.ShedRows = append(res.ShedRows, row)
			}
		}
	}
	return res, nil
}

// caveatFor joins a row family's fixed caveat, what the run observed, and
// the item caps it needed.
func caveatFor(im *impl, o *options, capped map[int]int) string {
	parts := []string{}
	if im.caveat != "" {
		parts = append(parts, im.caveat)
	}
	if im.notes != nil {
		parts = append(parts, im.notes()...)
	}
	if len(capped) > 0 {
		var cs []string
		for _, p := range o.producers {
			if m, ok := capped[p]; ok {
				cs = append(cs, fmt.Sprintf("%d at %d producers", m, p))
			}
		}
		parts = append(parts, "items per producer capped to fit the ring limit: "+strings.Join(cs, ", "))
	}
	return strings.Join(parts, "; ")
}
