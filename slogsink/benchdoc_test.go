package slogsink_test

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestBenchmarksDocMatchesBenchTxt renders the slogsink table of
// docs/benchmarks.md from testdata/bench.txt (which bash
// slogsink/testdata/bench.sh writes) and compares it with the block between
// the slogsink:begin and slogsink:end markers, so that the two cannot
// drift. bench.sh rewrites the block at its end, as does
//
//	go test ./slogsink/ -run TestBenchmarksDocMatchesBenchTxt -update
func TestBenchmarksDocMatchesBenchTxt(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "bench.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := renderBenchTable(raw)
	if err != nil {
		t.Fatalf("testdata/bench.txt: %v", err)
	}
	doc := filepath.Join("..", "docs", "benchmarks.md")
	text, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- slogsink:begin: generated from slogsink/testdata/bench.txt by TestBenchmarksDocMatchesBenchTxt; do not edit -->\n", "<!-- slogsink:end -->"
	i := bytes.Index(text, []byte(begin))
	j := bytes.Index(text, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s: no slogsink:begin/end pair of markers (the begin line reads %q)", doc, begin)
	}
	got := string(text[i+len(begin) : j])
	if got == want {
		return
	}
	if *update {
		out := append(append(append([]byte{}, text[:i+len(begin)]...), want...), text[j:]...)
		if err := os.WriteFile(doc, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the slogsink table differs from testdata/bench.txt; regenerate it with\n"+
		"\tgo test ./slogsink/ -run %s -update\nIn the file:\n%s\nFrom bench.txt:\n%s", doc, t.Name(), got, want)
}

// benchRun is what bench.txt holds: every value of every metric of every
// benchmark (its name without the -GOMAXPROCS suffix), and the header.
type benchRun struct {
	values map[string]map[string][]float64 // name, unit: values
	header string                          // bench.sh's first line, after "# "
	end    string                          // its last line, after "# end "
	cpu    string
}

func parseBench(raw []byte) (*benchRun, error) {
	r := &benchRun{values: map[string]map[string][]float64{}}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "# end "):
			r.end = strings.TrimPrefix(line, "# end ")
		case strings.HasPrefix(line, "# ") && r.header == "":
			r.header = strings.TrimPrefix(line, "# ")
		case strings.HasPrefix(line, "cpu: "):
			r.cpu = strings.TrimSpace(strings.TrimPrefix(line, "cpu: "))
		case strings.HasPrefix(line, "Benchmark"):
			f := strings.Fields(line)
			if len(f) < 4 || len(f)%2 != 0 {
				continue
			}
			name := f[0]
			if k := strings.LastIndexByte(name, '-'); k > 0 {
				if _, err := strconv.Atoi(name[k+1:]); err == nil {
					name = name[:k]
				}
			}
			if r.values[name] == nil {
				r.values[name] = map[string][]float64{}
			}
			for k := 2; k+1 < len(f); k += 2 {
				v, err := strconv.ParseFloat(f[k], 64)
				if err != nil {
					return nil, fmt.Errorf("%q: %v", line, err)
				}
				r.values[name][f[k+1]] = append(r.values[name][f[k+1]], v)
			}
		}
	}
	if r.header == "" {
		return nil, fmt.Errorf("no header line (# date, go version, GOMAXPROCS, load)")
	}
	return r, sc.Err()
}

// benchRow is one row of the table: a metric of a benchmark, for the
// synchronous handler and slogsink (handler=sync and handler=slogsink in
// the name; a metric that the synchronous handler does not report is
// slogsink's alone), or for slogsink alone (no handler= in the name).
type benchRow struct {
	label, bench, unit string
	show               func(float64) string
}

var benchRows = []benchRow{
	{"HTTP, 8 records/request: requests/s", "BenchmarkHTTP/records=8/handler=%s", "req/s", kilo},
	{"HTTP, 8 records/request: p99", "BenchmarkHTTP/records=8/handler=%s", "p99-ms", unit("ms")},
	{"HTTP, 8 records/request: lost", "BenchmarkHTTP/records=8/handler=%s", "%lost", unit("%")},
	{"HTTP, 32 records/request: requests/s", "BenchmarkHTTP/records=32/handler=%s", "req/s", kilo},
	{"HTTP, 32 records/request: p99", "BenchmarkHTTP/records=32/handler=%s", "p99-ms", unit("ms")},
	{"HTTP, 32 records/request: lost", "BenchmarkHTTP/records=32/handler=%s", "%lost", unit("%")},
	{"With of 2 attributes on a logger with one: time", "BenchmarkWith/records=0/handler=%s", "ns/op", nanos},
	{"With of 2 attributes: thread CPU", "BenchmarkWith/records=0/handler=%s", "cpu-ns/op", nanos},
	{"With of 2 attributes: allocations", "BenchmarkWith/records=0/handler=%s", "allocs/op", count},
	{"Info of 5 attributes on 3 With levels, io.Discard: time", "BenchmarkInfoOnAChain/handler=%s", "ns/op", nanos},
	{"Info on 3 With levels: thread CPU", "BenchmarkInfoOnAChain/handler=%s", "cpu-ns/op", nanos},
	{"Info on 3 With levels: shed", "BenchmarkInfoOnAChain/handler=%s", "%dropped", unit("%")},
	{"Info, 1 goroutine, file: written", "BenchmarkInfo/writer=file/goroutines=1/handler=%s", "MB-written/s", unit("MB/s")},
	{"Info, 1 goroutine, file: shed", "BenchmarkInfo/writer=file/goroutines=1/handler=%s", "%dropped", unit("%")},
	{"Info, 16 goroutines, file: written", "BenchmarkInfo/writer=file/goroutines=16/handler=%s", "MB-written/s", unit("MB/s")},
	{"Info, 16 goroutines, file: shed", "BenchmarkInfo/writer=file/goroutines=16/handler=%s", "%dropped", unit("%")},
	{"Info, 64 goroutines, file: written", "BenchmarkInfo/writer=file/goroutines=64/handler=%s", "MB-written/s", unit("MB/s")},
	{"Info, 64 goroutines, file: shed", "BenchmarkInfo/writer=file/goroutines=64/handler=%s", "%dropped", unit("%")},
	{"Info, 16 goroutines, 1 ms writer: p99 of the call", "BenchmarkInfo/writer=slow/goroutines=16/handler=%s", "p99-call-ns", nanos},
	{"Info, 64 goroutines, 1 ms writer: p99 of the call", "BenchmarkInfo/writer=slow/goroutines=64/handler=%s", "p99-call-ns", nanos},
	{"Info, 64 goroutines, 1 ms writer: shed", "BenchmarkInfo/writer=slow/goroutines=64/handler=%s", "%dropped", unit("%")},
	{"one drain turn of 1024 records", "BenchmarkDrainTurn/batch=1024", "µs/turn", unit("µs")},
}

// bytesRows are the rows of the second table, the cost of the byte budget
// (BenchmarkBytes): budget=off and budget=default in place of the two
// handlers.
var bytesRows = []benchRow{
	{"Info on 3 With levels, a record in its slot: time", "BenchmarkBytes/record=small/budget=%s", "ns/op", nanos},
	{"Info, a record in its slot: thread CPU", "BenchmarkBytes/record=small/budget=%s", "cpu-ns/op", nanos},
	{"Info, a record in its slot: shed", "BenchmarkBytes/record=small/budget=%s", "%dropped", unit("%")},
	{"Info on 3 With levels, a record of 1 KiB: time", "BenchmarkBytes/record=1KiB/budget=%s", "ns/op", nanos},
	{"Info, a record of 1 KiB: thread CPU", "BenchmarkBytes/record=1KiB/budget=%s", "cpu-ns/op", nanos},
	{"Info, a record of 1 KiB: shed", "BenchmarkBytes/record=1KiB/budget=%s", "%dropped", unit("%")},
}

// renderBenchTable renders the markdown between the markers: a line that
// says where the figures come from, and the table, with the range of the
// runs in each cell and the ratio of the medians.
func renderBenchTable(raw []byte) (string, error) {
	r, err := parseBench(raw)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	runs := 0
	if v := r.values["BenchmarkHTTP/records=8/handler=sync"]["req/s"]; len(v) > 0 {
		runs = len(v)
	}
	fmt.Fprintf(&b, "Measured by `bash slogsink/testdata/bench.sh`: %s, %s; ranges of %d runs, and the ratio of the medians.", r.header, r.cpu, runs)
	if r.end != "" {
		fmt.Fprintf(&b, " At the end: %s.", r.end)
	}
	b.WriteString("\n\n| | sync JSON handler | slogsink defaults | slogsink / sync |\n|---|---:|---:|---:|\n")
	if err := renderRows(&b, r, benchRows, "sync", "slogsink"); err != nil {
		return "", err
	}
	b.WriteString("\nThe byte budget (Options.MaxQueuedBytes), slogsink alone, io.Discard:\n\n" +
		"| | no bound (-1) | default (64 MiB) | default / no bound |\n|---|---:|---:|---:|\n")
	if err := renderRows(&b, r, bytesRows, "off", "default"); err != nil {
		return "", err
	}
	return b.String(), nil
}

// renderRows renders rows, whose benchmark names hold a %s for left and
// right (the columns), or none for a row of one cell.
func renderRows(b *strings.Builder, r *benchRun, rows []benchRow, left, right string) error {
	for _, row := range rows {
		if !strings.Contains(row.bench, "%s") {
			v := r.values[row.bench][row.unit]
			if len(v) == 0 {
				return fmt.Errorf("no %s of %s", row.unit, row.bench)
			}
			fmt.Fprintf(b, "| %s | | %s | |\n", row.label, cell(v, row.show))
			continue
		}
		lv := r.values[fmt.Sprintf(row.bench, left)][row.unit]
		rv := r.values[fmt.Sprintf(row.bench, right)][row.unit]
		if len(rv) == 0 {
			return fmt.Errorf("no %s of %s", row.unit, fmt.Sprintf(row.bench, right))
		}
		if len(lv) == 0 { // a metric of the right column's only
			fmt.Fprintf(b, "| %s | | %s | |\n", row.label, cell(rv, row.show))
			continue
		}
		ratio := "–"
		if m := median(lv); m != 0 {
			ratio = sig(median(rv)/m) + "x"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", row.label, cell(lv, row.show), cell(rv, row.show), ratio)
	}
	return nil
}

func cell(v []float64, show func(float64) string) string {
	lo, hi := slices.Min(v), slices.Max(v)
	if show(lo) == show(hi) {
		return show(lo)
	}
	return show(lo) + " – " + show(hi)
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// sig formats v with three significant digits (at least its integer part).
func sig(v float64) string {
	if v == 0 {
		return "0"
	}
	digits := max(0, 2-int(math.Floor(math.Log10(math.Abs(v)))))
	return strconv.FormatFloat(v, 'f', digits, 64)
}

func unit(u string) func(float64) string {
	return func(v float64) string {
		if u == "" {
			return sig(v)
		}
		if u == "%" {
			return sig(v) + " %"
		}
		return sig(v) + " " + u
	}
}

func kilo(v float64) string { return sig(v/1000) + " k" }

// count formats a count: whole, or with three significant digits.
func count(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return sig(v)
}

// nanos formats a time in ns as ns, µs or ms.
func nanos(v float64) string {
	switch {
	case v >= 1e6:
		return sig(v/1e6) + " ms"
	case v >= 1e3:
		return sig(v/1e3) + " µs"
	}
	return sig(v) + " ns"
}
