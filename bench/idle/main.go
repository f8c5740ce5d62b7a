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
// wake, the default, or poll, the original's 100 µs polling) and -shards
// (default: GOMAXPROCS clamped to [1, 8]).
//
// Usage:
//
//	go run ./bench/idle
//	go run ./bench/idle -mode poll -shards 8
//	go run ./bench/idle -format json -duration 10s -samples 1000
package main

import (
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
	format   report.Format
	duration time.Duration
	samples  int
	mode     sink.IdleMode
	shards   int
	busy     bool
}

// Result is what one run measured; its JSON form is the -format json output.
type Result struct {
	Machine     report.Machine `json:"machine"`
	IdleCPUPct  float64        `json:"idle_cpu_pct"`
	PickupP50us float64        `json:"pickup_p50_us"`
	PickupP99us float64        `json:"pickup_p99_us"`
}

func parse(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("idle", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "markdown", "output format: markdown or json")
	duration := fs.Duration("duration", 5*time.Second, "how long to measure the CPU time of the idle sink")
	samples := fs.Int("samples", 200, "how many values to push into the idle sink for the pickup latency")
	var mode sink.IdleMode
	fs.TextVar(&mode, "mode", sink.IdleWake, "idle mode of the sink: wake (the default) or poll (the original's polling)")
	shards := fs.Int("shards", 0, "shards of the sink; 0 for the default (GOMAXPROCS clamped to [1, 8])")
	producer := fs.String("producer", "block", "what the pushing goroutine does until Drain sees the value: block, or busy (keeps its P)")
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
	if o.format, err = report.ParseFormat(*format, report.Markdown, report.JSON); err != nil {
		return options{}, err
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
	o.mode = mode
	switch *producer {
	case "busy":
		o.busy = true
	case "block":
	default:
		return options{}, fmt.Errorf("-producer: unknown behaviour %q (want busy or block)", *producer)
	}
	o.duration, o.samples, o.shards = *duration, *samples, *shards
	return o, nil
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	r, shards, err := measure(o)
	if err != nil {
		return err
	}
	if o.format == report.JSON {
		return report.WriteJSON(stdout, r)
	}
	producer := "block"
	if o.busy {
		producer = "busy"
	}
	fmt.Fprintf(stdout, "Idle sink, %s\n\n", r.Machine)
	if err := report.WriteTable(stdout,
		[]string{"idle mode", "shards", "idle CPU (% of one core)", "pickup p50", "pickup p99"}, nil,
		[][]string{{
			o.mode.String(), fmt.Sprint(shards),
			fmt.Sprintf("%.3f %%", r.IdleCPUPct),
			report.Nanos(r.PickupP50us * 1e3), report.Nanos(r.PickupP99us * 1e3),
		}}); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "\nidle CPU over %v; pickup over %d samples, producer %s%s\n",
		o.duration, o.samples, producer, loadAverage())
	return err
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
