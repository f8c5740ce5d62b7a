package logprobe

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/shardedsink/shardedsink/internal/benchtxt"
)

// Table renders the goal tables of a front-end from a bench.sh run
// (benchtxt format): the stalled pipe and the file, a row per logger of
// modes (the names after "logger=" in BenchmarkStalledPipe and
// BenchmarkFile), and in the stalled pipe's a row per logger of stalled
// too (variants that only it runs: the hand-off off, a spill directory);
// then the caller's cost into io.Discard and the idle CPU, a row per
// logger of discard and idle. Every cell is the median of the runs;
// script is the command that wrote raw.
func Table(raw []byte, script string, modes, stalled, discard, idle []string) (string, error) {
	r, err := benchtxt.Parse(raw)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	get := func(bench, unit string) (float64, int, error) {
		v := r.Values[bench][unit]
		if len(v) == 0 {
			return 0, 0, fmt.Errorf("no %s of %s", unit, bench)
		}
		return benchtxt.Median(v), len(v), nil
	}
	// placement is the range of the cores' round trips measured before
	// a row's runs (core-rt-ns), or a dash for a run without them.
	placement := func(bench string) string {
		v := r.Values[bench]["core-rt-ns"]
		if len(v) == 0 {
			return "–"
		}
		lo, hi := slices.Min(v), slices.Max(v)
		if lo == hi {
			return nanos(lo)
		}
		return sig(lo) + "–" + nanos(hi)
	}
	fmt.Fprintf(&b, "Measured by `%s`: %s, %s; medians of the runs. At the end: %s.\n\n", script, r.Header, r.CPU, r.End)
	b.WriteString("Stalled pipe (64 goroutines for 2 s, the reader stalled for the first second; 1 call in 100 during the stall at ERROR; records reached: those the reader got, all after the stall):\n\n" +
		"| logger | runs | calls | records reached | reached the reader | p99 call | max call | ERROR lost / logged in the stall | calls not counted |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, m := range append(modes[:len(modes):len(modes)], stalled...) {
		name := "BenchmarkStalledPipe/logger=" + m
		calls, runs, err := get(name, "calls")
		if err != nil {
			return "", err
		}
		reached, _, _ := get(name, "%reached")
		p99, _, _ := get(name, "p99-call-ns")
		mx, _, _ := get(name, "max-call-ns")
		lost, _, _ := get(name, "kept-lost")
		kept, _, _ := get(name, "kept-calls")
		unacc := "–"
		if v, _, err := get(name, "unaccounted"); err == nil {
			unacc = strconv.FormatFloat(v, 'f', 0, 64)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s %% | %s | %s | %s / %s | %s |\n", m, runs, kilo(calls), kilo(calls*reached/100), sig(reached), nanos(p99), nanos(mx),
			strconv.FormatFloat(lost, 'f', 0, 64), strconv.FormatFloat(kept, 'f', 0, 64), unacc)
	}
	b.WriteString("\nHealthy file (goroutines logging flat out for 2 s; written/s: records that reached the file per second, Close included; cores' round trip: a cache line's, measured before each run, lowest–highest of the row's runs, the VM's placement of its two cores, which the sinks' rows follow):\n\n" +
		"| logger | goroutines | runs | calls/s | written/s | reached the file | p99 call | max call | cores' round trip |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, g := range []string{"1", "16", "64", "256"} {
		for _, m := range modes {
			name := "BenchmarkFile/logger=" + m + "/goroutines=" + g
			rate, runs, err := get(name, "calls/s")
			if err != nil {
				return "", err
			}
			written, _, _ := get(name, "written/s")
			reached, _, _ := get(name, "%reached")
			p99, _, _ := get(name, "p99-call-ns")
			mx, _, _ := get(name, "max-call-ns")
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s %% | %s | %s | %s |\n", m, g, runs, kilo(rate), kilo(written), sig(reached), nanos(p99), nanos(mx), placement(name))
		}
	}
	// The busy process and the offered rate: one table each, of the same
	// shape but for their first column, when the run has them.
	// The offered rate adds calls/s: callers that wait (for a full ring, a
	// mutex) make fewer calls than offered, which lost does not count.
	for _, sec := range []struct {
		bench, first, title string
		calls               bool
	}{
		{"BenchmarkBusy", "calls/s", "A busy process (64 goroutines, each burning 20 µs of CPU before each record, for 2 s; calls/s is the work done)", false},
		{"BenchmarkOffered", "offered/s", "An offered rate (64 goroutines for 2 s at 90 % of the synchronous logger's flat-out rate, measured first in the same run, while 2 more goroutines keep both cores busy; calls/s, Close included, well below offered/s: callers held up, calls never made)", true},
	} {
		if _, _, err := get(sec.bench+"/logger="+modes[0], sec.first); err != nil {
			continue
		}
		head, rule := "", ""
		if sec.calls {
			head, rule = " calls/s |", "---:|"
		}
		fmt.Fprintf(&b, "\n%s:\n\n| logger | runs | %s |%s written/s | lost | p99 call | max call | cores' round trip |\n|---|---:|---:|%s---:|---:|---:|---:|---:|\n", sec.title, sec.first, head, rule)
		for _, m := range modes {
			name := sec.bench + "/logger=" + m
			rate, runs, err := get(name, sec.first)
			if err != nil {
				return "", err
			}
			calls := ""
			if sec.calls {
				c, _, _ := get(name, "calls/s")
				calls = " " + kilo(c) + " |"
			}
			written, _, _ := get(name, "written/s")
			lost, _, _ := get(name, "lost")
			p99, _, _ := get(name, "p99-call-ns")
			mx, _, _ := get(name, "max-call-ns")
			fmt.Fprintf(&b, "| %s | %d | %s |%s %s | %s | %s | %s | %s |\n", m, runs, kilo(rate), calls, kilo(written), whole(lost), nanos(p99), nanos(mx), placement(name))
		}
	}
	b.WriteString("\nThe caller's cost into io.Discard, one goroutine:\n\n| logger | runs | time | allocations | time / first row's |\n|---|---:|---:|---:|---:|\n")
	var first float64
	for k, m := range discard {
		name := "BenchmarkDiscard/logger=" + m
		ns, runs, err := get(name, "ns/op")
		if err != nil {
			return "", err
		}
		allocs, _, _ := get(name, "allocs/op")
		if k == 0 {
			first = ns
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %sx |\n", m, runs, nanos(ns), whole(allocs), sig(ns/first))
	}
	b.WriteString("\nIdle, 10 s with nothing logged after one record: the process's CPU:\n\n| logger | runs | CPU, % of a core |\n|---|---:|---:|\n")
	for _, m := range idle {
		name := "BenchmarkIdle/logger=" + m
		pct, runs, err := get(name, "%core-idle")
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "| %s | %d | %s %% |\n", m, runs, sig(pct))
	}
	return b.String(), nil
}

// sig formats v with three significant digits (at least its integer part).
func sig(v float64) string {
	if v == 0 {
		return "0"
	}
	digits := max(0, 2-int(math.Floor(math.Log10(math.Abs(v)))))
	return strconv.FormatFloat(v, 'f', digits, 64)
}

func kilo(v float64) string {
	if v >= 1e6 {
		return sig(v/1e6) + " M"
	}
	return sig(v/1000) + " k"
}

// nanos formats a time in ns as ns, µs, ms or s.
func nanos(v float64) string {
	switch {
	case v >= 1e9:
		return sig(v/1e9) + " s"
	case v >= 1e6:
		return sig(v/1e6) + " ms"
	case v >= 1e3:
		return sig(v/1e3) + " µs"
	}
	return sig(v) + " ns"
}

// whole formats a count: whole, or with three significant digits.
func whole(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return sig(v)
}
