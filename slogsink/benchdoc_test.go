package slogsink_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/shardedsink/shardedsink/internal/benchtxt"
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
	if err := benchtxt.SyncBlock(filepath.Join("..", "docs", "benchmarks.md"), "slogsink", want, *update); err != nil {
		t.Error(err)
	}
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

// delayRows are the rows of the third table, what Options.MaxDelay saves
// the caller: BenchmarkInfoOnAChainWritingAtOnce (MaxDelay -1) and
// BenchmarkInfoOnAChain (the default) in place of the two handlers.
var delayRows = []benchRow{
	{"Info on 3 With levels, io.Discard: time", "BenchmarkInfoOnAChain%s/handler=slogsink", "ns/op", nanos},
	{"Info on 3 With levels: thread CPU", "BenchmarkInfoOnAChain%s/handler=slogsink", "cpu-ns/op", nanos},
	{"Info on 3 With levels: shed", "BenchmarkInfoOnAChain%s/handler=slogsink", "%dropped", unit("%")},
}

// renderBenchTable renders the markdown between the markers: a line that
// says where the figures come from, and the table, with the range of the
// runs in each cell and the ratio of the medians.
func renderBenchTable(raw []byte) (string, error) {
	r, err := benchtxt.Parse(raw)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	runs := 0
	if v := r.Values["BenchmarkHTTP/records=8/handler=sync"]["req/s"]; len(v) > 0 {
		runs = len(v)
	}
	fmt.Fprintf(&b, "Measured by `bash slogsink/testdata/bench.sh`: %s, %s; ranges of %d runs, and the ratio of the medians.", r.Header, r.CPU, runs)
	fmt.Fprintf(&b, " At the end: %s.", r.End)
	b.WriteString("\n\n| | sync JSON handler | slogsink defaults | slogsink / sync |\n|---|---:|---:|---:|\n")
	if err := renderRows(&b, r, benchRows, "sync", "slogsink"); err != nil {
		return "", err
	}
	b.WriteString("\nThe byte budget (Options.MaxQueuedBytes), slogsink alone, io.Discard:\n\n" +
		"| | no bound (-1) | default (64 MiB) | default / no bound |\n|---|---:|---:|---:|\n")
	if err := renderRows(&b, r, bytesRows, "off", "default"); err != nil {
		return "", err
	}
	b.WriteString("\nThe drain worker's wait for a fuller batch (Options.MaxDelay), slogsink alone, io.Discard:\n\n" +
		"| | write at once (-1) | default (100 µs) | default / at once |\n|---|---:|---:|---:|\n")
	if err := renderRows(&b, r, delayRows, "WritingAtOnce", ""); err != nil {
		return "", err
	}
	return b.String(), nil
}

// renderRows renders rows, whose benchmark names hold a %s for left and
// right (the columns), or none for a row of one cell.
func renderRows(b *strings.Builder, r *benchtxt.Run, rows []benchRow, left, right string) error {
	for _, row := range rows {
		if !strings.Contains(row.bench, "%s") {
			v := r.Values[row.bench][row.unit]
			if len(v) == 0 {
				return fmt.Errorf("no %s of %s", row.unit, row.bench)
			}
			fmt.Fprintf(b, "| %s | | %s | |\n", row.label, cell(v, row.show))
			continue
		}
		lv := r.Values[fmt.Sprintf(row.bench, left)][row.unit]
		rv := r.Values[fmt.Sprintf(row.bench, right)][row.unit]
		if len(rv) == 0 {
			return fmt.Errorf("no %s of %s", row.unit, fmt.Sprintf(row.bench, right))
		}
		if len(lv) == 0 { // a metric of the right column's only
			fmt.Fprintf(b, "| %s | | %s | |\n", row.label, cell(rv, row.show))
			continue
		}
		ratio := "–"
		if m := benchtxt.Median(lv); m != 0 {
			ratio = sig(benchtxt.Median(rv)/m) + "x"
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
