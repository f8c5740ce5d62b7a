package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shardedsink/shardedsink/bench/internal/report"
	"github.com/shardedsink/shardedsink/sink"
)

// The front page's table is generated: -format headline renders it from the
// committed run of median sink cost, -o README.md replaces it in place, and
// TestHeadlineIsUpToDate fails when the README disagrees. -format summary
// (the default command's output) is the same table for the run at hand.
const (
	headlineBegin = "<!-- headline:begin: `go run ./bench/contended -from 'bench/contended/runs/*.json' -format headline -o README.md` -->"
	headlineEnd   = "<!-- headline:end -->"
)

// frontRow is one row of the front page: the harness row it reads and what a
// reader calls it.
type frontRow struct{ impl, label string }

// frontRows are the front page's rows: the sink as users push into it, then
// what a Go program would use instead (one shared ring, a mutex, a channel,
// and xsync, the peer a Go programmer finds first). The other peers are in
// docs/benchmarks.md's full tables.
var frontRows = []frontRow{
	{"sharded-push", "**sink** (`Sink.Push`, default Config but ring size)"},
	{"single-vyukov", "one shared `vyukov` ring"},
	{"single-mutex", "one mutex around a slice"},
	{"single-chan", "a buffered channel, `select`-`default`"},
	{"xsync", "xsync `MPMCQueue.TryEnqueue` (gives up on lost races)"},
}

// frontDefaults is the row beside the sink's held one: the sink with every
// default, its workers draining (what a user gets without tuning), from the
// draining table, marked ‡.
var frontDefaults = frontRow{"sharded-push-defaults", "**sink**, every default, draining ‡"}

// drained is the table frontDefaults is read from.
var drained = tableKey{"draining", 8}

// frontAt is the producer count the front page reads, and frontReference the
// one it shows beside it; a run without frontAt reads its largest count.
const (
	frontAt        = 64
	frontReference = 1
)

// frontAtOf is the producer count the front page reads of a run with
// config c: frontAt, or the largest count c has when it lacks frontAt.
func frontAtOf(c Config) int {
	if ps := c.Producers; !slices.Contains(ps, frontAt) && len(ps) > 0 {
		return slices.Max(ps)
	}
	return frontAt
}

// medianRun returns, of the headline runs, the one whose sink cell (the
// first front row's core-ns per push at frontAt producers, or at the
// largest count a run has) is the median, the lower one of an even count;
// fallback when no run has that cell. The front page shows that run, and
// the spread of the others beside it.
func medianRun(runs []*Result, fallback *Result) *Result {
	type cell struct {
		run *Result
		ns  float64
	}
	var cells []cell
	for _, run := range runs {
		at := frontAtOf(run.Config)
		if r, ok := find(rowsOf(run, headline), frontRows[0].impl, at); ok {
			cells = append(cells, cell{run, r.CoreNsPerOp})
		}
	}
	if len(cells) == 0 {
		return fallback
	}
	slices.SortStableFunc(cells, func(a, b cell) int { return cmp.Compare(a.ns, b.ns) })
	return cells[(len(cells)-1)/2].run
}

// writeHeadline writes the front page's table of res, the headline run of
// median sink cost (medianRun), with its caption: at 64 producers (1 for
// reference), for each front row, pushes per second, core-ns per push, p99
// and drop % (p99.9 and the other peers are in the full tables), and the
// sink with every default and its workers draining from all (the combined
// runs) when it has that row. The caption says how the rows ran: every
// structure but the defaults row holds a whole round, and a row marked †
// had producers that took turns (the full tables call it invalid for
// per-thread CPU).
func writeHeadline(w io.Writer, res *Result, runs []*Result, all *Result) error {
	at := frontAtOf(res.Config)
	r := res.Run
	spread := ""
	if len(runs) > 1 {
		spread = fmt.Sprintf("; the sink's cells ranged %s at %d producers, %s at %d",
			sinkRange(runs, at), at, sinkRange(runs, frontReference), frontReference)
	}
	defaults := ""
	if _, ok := find(rowsOf(all, drained), frontDefaults.impl, at); ok {
		defaults = fmt.Sprintf("; ‡: every default (%s-slot rings), workers draining, another run",
			groupDigits(sink.DefaultRingCapacity))
	}
	caption := report.Wrap(fmt.Sprintf("%d producers, each on its own OS thread, push 8-byte values into structures that "+
		"hold a whole round (%s slots), nobody draining%s. "+
		"Core-ns per push: min(producers, GOMAXPROCS) x wall time / accepted pushes; †: producers took turns. "+
		"The median of %d runs by the sink's cell (%s%s): %s, load average %s, Sink.Push on %s "+
		"([method](docs/benchmarks.md#the-decision-table-benchcontended)).",
		at, groupDigits(ringCapacity(res.Config.Round)), defaults, max(len(runs), 1), windowShort(res.Config),
		spread, r.Machine, report.FormatLoad(r.LoadBefore), homesText(res.Config.Homes)), report.FrontPageWidth, "")
	if _, err := io.WriteString(w, caption+"\n\n"); err != nil {
		return err
	}
	return writeFrontTable(w, res, all, at)
}

// sinkRange is the smallest and largest core-ns per push of the sink's
// front row at producers p over runs, "19.8-24.7", so that the one run the
// table shows is read beside the others.
func sinkRange(runs []*Result, p int) string {
	var xs []float64
	for _, run := range runs {
		if r, ok := find(rowsOf(run, headline), frontRows[0].impl, p); ok {
			xs = append(xs, r.CoreNsPerOp)
		}
	}
	if len(xs) == 0 {
		return "–"
	}
	return sig3(slices.Min(xs)) + "-" + sig3(slices.Max(xs))
}

// writeSummary is the default command's output: the front page's table for
// the run at hand, the goals it can read, and where the full grid is.
func writeSummary(w io.Writer, res *Result) error {
	at := frontAtOf(res.Config)
	fmt.Fprintf(w, "%d producers push 8-byte values, nobody draining (%s); %s; Sink.Push on %s.\n\n",
		at, windowShort(res.Config), res.Run.Machine, homesText(res.Config.Homes))
	if err := writeFrontTable(w, res, res, at); err != nil {
		return err
	}
	if goals := checkGoals([]*Result{res}); len(goals) > 0 {
		fmt.Fprintln(w, "\nGoals:")
		for _, g := range goals {
			fmt.Fprintf(w, "- %s\n", g)
		}
	}
	_, err := fmt.Fprintln(w, "\nEvery row and producer count, per-thread CPU and parallelism: -format markdown; the committed method: bash bench/contended/run.sh.")
	return err
}

// writeFrontTable writes the front rows of res's headline table at
// producers at, and after the sink's the defaults row of all's draining
// table when it has one, with core-ns per push at frontReference beside
// them.
func writeFrontTable(w io.Writer, res, all *Result, at int) error {
	header := []string{fmt.Sprintf("at %d producers", at), "pushes/s", "core-ns per push", "p99", "drop %",
		fmt.Sprintf("core-ns at %d producer", frontReference)}
	var lines [][]string
	add := func(rows []Row, fr frontRow) {
		r, ok := find(rows, fr.impl, at)
		if !ok {
			return
		}
		ref := ""
		if one, ok := find(rows, fr.impl, frontReference); ok && at != frontReference {
			ref = sig3(one.CoreNsPerOp)
		}
		label := fr.label
		if !r.Valid {
			label += " †"
		}
		lines = append(lines, []string{label, perSecond(r.ThroughputPerS), sig3(r.CoreNsPerOp),
			report.Nanos(r.P99Ns), pct(r.DropPct), ref})
	}
	rows := rowsOf(res, headline)
	for i, fr := range frontRows {
		add(rows, fr)
		if i == 0 {
			add(rowsOf(all, drained), frontDefaults)
		}
	}
	if len(lines) == 0 {
		var names []string
		for _, fr := range frontRows {
			names = append(names, fr.impl)
		}
		return fmt.Errorf("-format headline: the run has none of the rows %s at %d producers in its %s table", strings.Join(names, ", "), at, headline)
	}
	return report.WriteTable(w, header, nil, lines)
}

// windowShort is a run's trial shape in a few words: "medians of 5 trials of
// a 200ms window".
func windowShort(c Config) string {
	return "medians of " + strconv.Itoa(c.Trials) + " trials of a " + time.Duration(c.WindowNs).String() + " window"
}

// The run on a machine of more cores than the page's is generated too:
// -format manycore renders the front page's table for it, -o
// docs/benchmarks.md replaces the block between these markers, and
// TestManyCoreBlockIsUpToDate fails when the two differ.
const (
	manyCoreBegin = "<!-- manycore:begin: `go run ./bench/contended -from 'bench/contended/runs-16core/*.json' -format manycore -o docs/benchmarks.md` -->"
	manyCoreEnd   = "<!-- manycore:end -->"
)

// writeManyCore writes the front page's table for res, a run on a machine
// of more cores than the 2 of the page's (the defaults row from its
// draining table when it has one), with a caption that names the machine,
// the load, the shards and the producers' scheduling policy, since that
// run is the exception to the page's one machine.
func writeManyCore(w io.Writer, res *Result) error {
	at := frontAtOf(res.Config)
	policy := "–"
	if r, ok := find(rowsOf(res, headline), frontRows[0].impl, at); ok {
		policy = r.Scheduler
	}
	fmt.Fprintf(w, "Measured once, on a machine lent to this work for minutes: %s, load average %s before; %d shards; %s; "+
		"the producers' scheduling policy: %s; Sink.Push on %s. Rows and columns as in the README's table (held: nobody draining, "+
		"structures that hold a whole round; ‡: every default, %s-slot rings, workers draining).\n\n",
		res.Run.Machine, report.FormatLoad(res.Run.LoadBefore), res.Config.Shards, windowShort(res.Config), policy,
		homesText(res.Config.Homes), groupDigits(sink.DefaultRingCapacity))
	return writeFrontTable(w, res, res, at)
}
