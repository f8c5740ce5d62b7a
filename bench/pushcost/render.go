package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/shardedsink/shardedsink/bench/internal/report"
)

// cell is the median of a set of measurements, with its smallest and
// largest.
type cell struct {
	median, min, max float64
	n                int
}

func summarize(xs []float64) cell {
	if len(xs) == 0 {
		return cell{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return cell{median: report.Median(s), min: s[0], max: s[len(s)-1], n: len(s)}
}

// String prints "median (min-max)", or "-" for no data.
func (c cell) String() string {
	if c.n == 0 {
		return "-"
	}
	return fmt.Sprintf("%s (%s-%s)", report.Sig3(c.median), report.Sig3(c.min), report.Sig3(c.max))
}

// group collects a metric by a key of the caller's.
type group map[string][]float64

func (g group) add(k string, v float64) { g[k] = append(g[k], v) }

// producers is the column order of the contended tables.
func producerCounts(samples []sample) []int {
	var ps []int
	for _, s := range samples {
		if p, err := strconv.Atoi(key(s.name, "producers")); err == nil && !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	return ps
}

func render(w io.Writer, raw []byte, samples []sample) error {
	bw := bufio.NewWriter(w)
	// The run's description, as markdown lines: "machine: ...", the load
	// averages before and after.
	for line := range bytes.Lines(raw) {
		if bytes.HasPrefix(line, []byte("# ")) && !bytes.HasPrefix(line, []byte("# design")) {
			fmt.Fprintf(bw, "%s  \n", bytes.TrimSpace(line[2:]))
		}
	}
	fmt.Fprintln(bw)
	if err := contendedTable(bw, samples, "BenchmarkContended", []string{"Handle.Push", "Sink.Push"}, true); err != nil {
		return err
	}
	if err := userTable(bw, samples); err != nil {
		return err
	}
	return bw.Flush()
}

// renderDesign prints the design alternatives' table alone.
func renderDesign(w io.Writer, samples []sample) error {
	bw := bufio.NewWriter(w)
	if err := contendedTable(bw, samples, "BenchmarkPushDesignAlternatives", nil, false); err != nil {
		return err
	}
	return bw.Flush()
}

// contendedTable prints per-thread CPU ns per accepted push by row
// (consumers, payload, impl) and producer count; with ratios, it adds
// Sink.Push / Handle.Push and each row's cost against its 1-producer cost.
func contendedTable(w io.Writer, samples []sample, bench string, order []string, ratios bool) error {
	g := group{}
	var rows []string
	for _, s := range samples {
		if !strings.HasPrefix(s.name, bench+"/") {
			continue
		}
		v, ok := s.metrics["cpu-ns/op"]
		if !ok {
			continue
		}
		row := rowName(s.name)
		if !slices.Contains(rows, row) {
			rows = append(rows, row)
		}
		g.add(row+"|"+key(s.name, "producers"), v)
	}
	if len(rows) == 0 {
		return nil
	}
	ps := producerCounts(samples)
	header := []string{bench + ": cpu ns per accepted push, median (min-max)"}
	for _, p := range ps {
		header = append(header, fmt.Sprintf("%d", p))
	}
	var out [][]string
	for _, row := range rows {
		r := []string{row}
		for _, p := range ps {
			r = append(r, summarize(g[fmt.Sprintf("%s|%d", row, p)]).String())
		}
		out = append(out, r)
	}
	if err := report.WriteTable(w, header, nil, out); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if !ratios || len(order) != 2 {
		return nil
	}
	// Ratios of medians.
	med := func(row string, p int) float64 { return summarize(g[fmt.Sprintf("%s|%d", row, p)]).median }
	header = []string{"ratio of medians"}
	for _, p := range ps {
		header = append(header, fmt.Sprintf("%d", p))
	}
	out = nil
	for _, row := range rows {
		if strings.HasSuffix(row, order[1]) {
			base := strings.TrimSuffix(row, order[1]) + order[0]
			r := []string{row + " / " + order[0]}
			for _, p := range ps {
				r = append(r, ratio(med(row, p), med(base, p)))
			}
			out = append(out, r)
		}
	}
	for _, row := range rows {
		r := []string{row + ", against 1 producer"}
		for _, p := range ps {
			r = append(r, ratio(med(row, p), med(row, ps[0])))
		}
		out = append(out, r)
	}
	if err := report.WriteTable(w, header, nil, out); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// rowName is "consumers, payload, impl" from a contended benchmark's name.
func rowName(name string) string {
	return fmt.Sprintf("%s, %s B, %s", key(name, "consumers"), key(name, "payload"), key(name, "impl"))
}

// userTable prints the usercost benchmarks in the user's package against
// their twin with sync/atomic imported.
func userTable(w io.Writer, samples []sample) error {
	const user, twin = "bench/usercost", "bench/usercost/withatomic"
	g := group{}
	var names []string
	for _, s := range samples {
		var side string
		switch {
		case strings.HasSuffix(s.pkg, twin):
			side = "twin"
		case strings.HasSuffix(s.pkg, user):
			side = "user"
		default:
			continue
		}
		v, ok := s.metrics["ns/op"]
		if !ok {
			continue
		}
		if !slices.Contains(names, s.name) {
			names = append(names, s.name)
		}
		g.add(side+"|"+s.name, v)
	}
	if len(names) == 0 {
		return nil
	}
	header := []string{"one goroutine, ns per op, median (min-max)", "user's package (imports only the library)", "with sync/atomic imported", "ratio"}
	var out [][]string
	for _, n := range names {
		u, t := summarize(g["user|"+n]), summarize(g["twin|"+n])
		out = append(out, []string{strings.TrimPrefix(n, "Benchmark"), u.String(), t.String(), ratio(u.median, t.median)})
	}
	if err := report.WriteTable(w, header, nil, out); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return nil
}
