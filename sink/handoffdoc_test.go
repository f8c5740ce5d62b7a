package sink_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shardedsink/shardedsink/internal/benchtxt"
)

var updateDocs = flag.Bool("update", false, "rewrite docs/benchmarks.md's generated blocks from testdata")

// TestHandOffDocMatchesHandOffTxt renders docs/benchmarks.md's "What a
// push waits for" tables from testdata/handoff.txt (which bash
// sink/testdata/handoff.sh writes) and compares them with the block
// between the handoff:begin and handoff:end markers; handoff.sh rewrites
// the block at its end, as does
//
//	go test ./sink/ -run TestHandOffDocMatchesHandOffTxt -update
func TestHandOffDocMatchesHandOffTxt(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "handoff.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := renderHandOffTables(raw)
	if err != nil {
		t.Fatalf("testdata/handoff.txt: %v", err)
	}
	if err := benchtxt.SyncBlock(filepath.Join("..", "docs", "benchmarks.md"), "handoff", want, *updateDocs); err != nil {
		t.Error(err)
	}
}

// dur shows nanoseconds as a duration of three significant digits.
func dur(ns float64) string {
	d := time.Duration(ns)
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%.0f ns", ns)
	case d < time.Millisecond:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	}
	return fmt.Sprintf("%.3g s", ns/1e9)
}

// durSpread is "median (min-max)" of durations.
func durSpread(xs []float64) string {
	return fmt.Sprintf("%s (%s-%s)", dur(benchtxt.Median(xs)), dur(slices.Min(xs)), dur(slices.Max(xs)))
}

func renderHandOffTables(raw []byte) (string, error) {
	r, err := benchtxt.Parse(raw)
	if err != nil {
		return "", err
	}
	get := func(bench, unit string) ([]float64, error) {
		v := r.Values[bench][unit]
		if len(v) == 0 {
			return nil, fmt.Errorf("no %s of %s", unit, bench)
		}
		return v, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Measured by `bash sink/testdata/handoff.sh`: %s, %s; medians of the runs, the longest push as median (min-max). At the end: %s.\n\n", r.Header, r.CPU, r.End)
	b.WriteString("Issue 62's program: Shards 2, RingCapacity 1024, BatchSize 256, 8 producers with a Handle each, offering for 1 s twice what the Drain takes at its nominal time per call (the stall row: a quarter, for 2 s, the Drain stalling 1 s from 200 ms); busy cores: two more goroutines spin throughout.\n\n")
	b.WriteString("| Drain per call | cores | hand-off on: push p50 / p99.9 / longest | shed | hand-offs | hand-off off: push p50 / p99.9 / longest | shed |\n")
	b.WriteString("|---|---|---|---:|---:|---|---:|\n")
	for _, d := range slowDrains {
		for _, load := range []string{"idle", "busy"} {
			fmt.Fprintf(&b, "| %s | %s |", strings.Replace(d.name, "=", " ", 1), load)
			for _, h := range []string{"on", "off"} {
				name := fmt.Sprintf("BenchmarkSlowDestination/drain=%s/cores=%s/handoff=%s", d.name, load, h)
				p50, err := get(name, "p50-push-ns")
				if err != nil {
					return "", err
				}
				p999, _ := get(name, "p999-push-ns")
				mx, _ := get(name, "max-push-ns")
				shed, _ := get(name, "shed-%")
				fmt.Fprintf(&b, " %s / %s / %s | %.1f %% |", dur(benchtxt.Median(p50)), dur(benchtxt.Median(p999)), durSpread(mx), benchtxt.Median(shed))
				if h == "on" {
					ho, _ := get(name, "handoffs")
					fmt.Fprintf(&b, " %.0f |", benchtxt.Median(ho))
				}
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\nThe starved rows, where the hand-off parks: 256 producers on locked OS threads push 2,000 values each flat out into a default sink whose Drain returns at once.\n\n")
	b.WriteString("| | pushes refused (of 512,000) | longest push | hand-offs |\n|---|---:|---|---:|\n")
	for _, h := range []string{"on", "off"} {
		name := "BenchmarkStarved/producers=256/handoff=" + h
		ref, err := get(name, "refused")
		if err != nil {
			return "", err
		}
		mx, _ := get(name, "max-push-ns")
		ho, _ := get(name, "handoffs")
		fmt.Fprintf(&b, "| hand-off %s | %.0f (%.0f-%.0f) | %s | %.0f |\n", h, benchtxt.Median(ref), slices.Min(ref), slices.Max(ref), durSpread(mx), benchtxt.Median(ho))
	}
	b.WriteString("\n64 goroutines log flat out for 2 s into a healthy file, and into a pipe whose reader stalls 1 s of 2 (cd zapsink or zerologsink; `BenchmarkFile`, `BenchmarkStalledPipe`).\n\n")
	b.WriteString("| logger | healthy file: records written/s | lost | longest call | stalled pipe: longest call | reached the reader |\n|---|---:|---:|---|---|---:|\n")
	for _, lg := range []string{"zapsink-Core", "zap-BufferedWriteSyncer", "zap-AddSync", "zerologsink", "zerolog"} {
		file := "BenchmarkFile/logger=" + lg + "/goroutines=64"
		ws, err := get(file, "written/s")
		if err != nil {
			return "", err
		}
		lost, _ := get(file, "lost")
		mx, _ := get(file, "max-call-ns")
		fmt.Fprintf(&b, "| %s | %.2f M | %.0f | %s |", lg, benchtxt.Median(ws)/1e6, benchtxt.Median(lost), durSpread(mx))
		pipe := "BenchmarkStalledPipe/logger=" + lg
		if pm, ok := r.Values[pipe]["max-call-ns"]; ok {
			reached := r.Values[pipe]["%reached"]
			fmt.Fprintf(&b, " %s | %.1f %% |\n", durSpread(pm), benchtxt.Median(reached))
		} else {
			b.WriteString(" – | – |\n")
		}
	}
	return b.String(), nil
}
