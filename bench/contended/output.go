package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/shardedsink/shardedsink/bench/internal/report"
)

// Result is everything one run measured; it is the JSON document that
// -format json writes.
//
//	{
//	  "machine":   {"cpu", "cores", "gomaxprocs", "go_version", "os", "arch"},
//	  "config":    {"command", "items", "trials", "shards", "producers", "idle"},
//	  "rows":      [{"impl", "producers", "cpu_ns_per_op", "drop_pct",
//	                 "throughput_per_s", "p99_ns", "p999_ns", "max_ns"}],
//	  "shed_rows": [{"impl", "producers", "cpu_ns_per_op", "rejected_pct"}],
//	  "caveats":   {"<impl>": "<text>"}
//	}
//
// rows is the accept-path table; shed_rows is the rejected-push table (a
// full sink, every push rejected); caveats holds the note of every row
// family that has one, keyed by impl name.
type Result struct {
	Machine  report.Machine    `json:"machine"`
	Config   Config            `json:"config"`
	Rows     []Row             `json:"rows"`
	ShedRows []ShedRow         `json:"shed_rows"`
	Caveats  map[string]string `json:"caveats"`
}

// Config records how the run was made.
type Config struct {
	Command   string `json:"command"`
	Items     int    `json:"items"` // timed pushes per producer (zenq rows may use fewer; see caveats)
	Trials    int    `json:"trials"`
	Shards    int    `json:"shards"`
	Producers []int  `json:"producers"`
	Idle      string `json:"idle"` // idle mode of the sink rows: wake or poll
}

// Row is one line of the accept-path table.
type Row struct {
	Impl           string  `json:"impl"`
	Producers      int     `json:"producers"`
	CPUNsPerOp     float64 `json:"cpu_ns_per_op"`    // median over trials of Δcpu/items, averaged over producers
	DropPct        float64 `json:"drop_pct"`         // rejected pushes, pooled over all trials and the tail run
	ThroughputPerS float64 `json:"throughput_per_s"` // median over trials of accepted timed pushes / wall time
	P99Ns          float64 `json:"p99_ns"`           // wall clock, tail run
	P999Ns         float64 `json:"p999_ns"`
	MaxNs          float64 `json:"max_ns"`

	items int // timed pushes per producer used for this row
}

// ShedRow is one line of the shed-path table: the cost of a rejected push.
type ShedRow struct {
	Impl        string  `json:"impl"`
	Producers   int     `json:"producers"`
	CPUNsPerOp  float64 `json:"cpu_ns_per_op"` // median over trials, per rejected push attempt
	RejectedPct float64 `json:"rejected_pct"`  // should read 100
}

// writeMarkdown writes the tables for people: the machine and the command,
// the accept-path table, a pivot of its cpu ns/op, the goals, the shed
// table and the caveats.
func writeMarkdown(w io.Writer, res *Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Machine: %s\n\n", res.Machine)
	fmt.Fprintf(&b, "Command: `%s` (items %d per producer, %d trials, %d shards, sink idle mode %s)\n\n",
		res.Config.Command, res.Config.Items, res.Config.Trials, res.Config.Shards, res.Config.Idle)

	b.WriteString("### Accept path: per-thread CPU ns per push, rings sized to hold the whole burst\n\n")
	rows := make([][]string, 0, len(res.Rows))
	for _, r := range res.Rows {
		rows = append(rows, []string{
			r.Impl, strconv.Itoa(r.Producers), sig3(r.CPUNsPerOp), pct(r.DropPct),
			perSecond(r.ThroughputPerS), report.Nanos(r.P99Ns), report.Nanos(r.P999Ns), report.Nanos(r.MaxNs),
		})
	}
	if err := writeTable(&b, []string{"impl", "producers", "cpu ns/op", "drop %", "throughput/s", "p99", "p99.9", "max"}, rows); err != nil {
		return err
	}
	b.WriteString("\n")

	if pivot := pivotTable(res.Rows); pivot != nil {
		b.WriteString("### cpu ns/op by producer count\n\n")
		if err := writeTable(&b, pivot[0], pivot[1:]); err != nil {
			return err
		}
		b.WriteString("\n")
	}

	if goals := checkGoals(res.Rows); len(goals) > 0 {
		b.WriteString("### Goals\n\n")
		for _, g := range goals {
			fmt.Fprintf(&b, "- %s\n", g)
		}
		b.WriteString("\n")
	}

	if len(res.ShedRows) > 0 {
		b.WriteString("### Shed path: per-thread CPU ns per rejected push, every ring of the sink full\n\n")
		rows = rows[:0]
		for _, r := range res.ShedRows {
			rows = append(rows, []string{r.Impl, strconv.Itoa(r.Producers), sig3(r.CPUNsPerOp), pct(r.RejectedPct)})
		}
		if err := writeTable(&b, []string{"impl", "producers", "cpu ns/op", "rejected %"}, rows); err != nil {
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

// methodNote is the first bullet of the notes: how the numbers were made.
const methodNote = "- **method**: every producer is a goroutine locked to its own OS thread; after a barrier it makes " +
	"items/10 warm-up pushes, then items timed pushes between two readings of its thread's CPU clock " +
	"(CLOCK_THREAD_CPUTIME_ID). cpu ns/op is Δcpu/items averaged over the producers, median of the trials; " +
	"it excludes time spent waiting for a core. Rings hold the whole burst (sharded: ceil(producers/shards) x " +
	"(items + items/10) + 1024 per shard; 1-shard sink and single queues: producers x (items + items/10) + 1024), " +
	"so drop % (pooled over every trial and the tail run) must read 0. Throughput is accepted timed pushes per " +
	"second of wall clock, median of the trials. p99, p99.9 and max come from a separate run on a fresh instance " +
	"that times every push with the wall clock, sorted[round(p*(n-1))]. Sink rows: a Handle per producer " +
	"(round-robin), stealing off, no-op drain, batch 256. Every other row has one consumer goroutine that takes " +
	"up to 256 values and yields, and sleeps 100 µs when the queue is empty, as a sink shard has its worker. " +
	"Shed rows: a sharded sink with 1024 slots per shard whose drain workers are blocked and whose rings are full; " +
	"cpu ns/op per rejected (and counted) push.\n"

// writeTable writes a markdown table, the first column left-aligned.
func writeTable(w io.Writer, header []string, rows [][]string) error {
	return report.WriteTable(w, header, nil, rows)
}

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

// pivotTable turns the rows into producers x impl cpu ns/op, the shape of
// the original README's table. The first row is the header.
func pivotTable(rows []Row) [][]string {
	if len(rows) == 0 {
		return nil
	}
	var names []string
	var prods []int
	cell := map[string]map[int]float64{}
	for _, r := range rows {
		if cell[r.Impl] == nil {
			cell[r.Impl] = map[int]float64{}
			names = append(names, r.Impl)
		}
		cell[r.Impl][r.Producers] = r.CPUNsPerOp
		if !slices.Contains(prods, r.Producers) {
			prods = append(prods, r.Producers)
		}
	}
	slices.Sort(prods)
	out := [][]string{append([]string{"producers"}, names...)}
	for _, p := range prods {
		line := []string{strconv.Itoa(p)}
		for _, n := range names {
			if v, ok := cell[n][p]; ok {
				line = append(line, sig3(v))
			} else {
				line = append(line, "")
			}
		}
		out = append(out, line)
	}
	return out
}

// checkGoals evaluates the performance goals on the rows that are
// present: sharded-vyukov at 64 producers at most 0.2x single-chan and
// single-vyukov, at 256 at most 1.5x its cost at 1, and drop % 0 on every
// accept-path row (xsync and Workiva excepted: theirs is contention).
func checkGoals(rows []Row) []string {
	get := func(impl string, p int) (float64, bool) {
		for _, r := range rows {
			if r.Impl == impl && r.Producers == p {
				return r.CPUNsPerOp, true
			}
		}
		return 0, false
	}
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	var out []string
	if sv, ok := get("sharded-vyukov", 64); ok {
		for _, base := range []string{"single-chan", "single-vyukov"} {
			if bv, ok := get(base, 64); ok && bv > 0 {
				ratio := sv / bv
				out = append(out, fmt.Sprintf("sharded-vyukov at 64 producers costs %.3fx %s (%s vs %s ns/op; goal <= 0.2x): %s",
					ratio, base, sig3(sv), sig3(bv), verdict(ratio <= 0.2)))
			}
		}
	}
	s1, ok1 := get("sharded-vyukov", 1)
	s256, ok256 := get("sharded-vyukov", 256)
	if ok1 && ok256 && s1 > 0 {
		ratio := s256 / s1
		out = append(out, fmt.Sprintf("sharded-vyukov at 256 producers costs %.2fx its cost at 1 (%s vs %s ns/op; goal <= 1.5x): %s",
			ratio, sig3(s256), sig3(s1), verdict(ratio <= 1.5)))
	}
	var dropped []string
	for _, r := range rows {
		if r.DropPct > 0 && r.Impl != "xsync" && r.Impl != "workiva" {
			dropped = append(dropped, fmt.Sprintf("%s@%d", r.Impl, r.Producers))
		}
	}
	if len(rows) > 0 {
		if len(dropped) == 0 {
			out = append(out, "drop % is 0 on every accept-path row (xsync and workiva excepted, see notes): met")
		} else {
			out = append(out, "drop % above 0 on "+strings.Join(dropped, ", ")+": MISSED")
		}
	}
	return out
}

// sig3 formats a number with three significant digits, without exponent.
func sig3(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "-"
	case x >= 100:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case x >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	default:
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
}

// pct formats a percentage; an exact zero reads "0".
func pct(x float64) string {
	if x == 0 {
		return "0"
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// perSecond formats a rate with an SI suffix: 312 M, 4.51 k.
func perSecond(x float64) string {
	switch {
	case x >= 1e9:
		return sig3(x/1e9) + " G"
	case x >= 1e6:
		return sig3(x/1e6) + " M"
	case x >= 1e3:
		return sig3(x/1e3) + " k"
	default:
		return sig3(x)
	}
}
