package logprobe

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/shardedsink/shardedsink/internal/machine"
)

// placementRoundTrips is how many cache-line round trips benchFile times
// before each run (machine.CoreRoundTrip): 6 to 34 ms on the project's
// 2-core VMs, against a run of seconds.
const placementRoundTrips = 100_000

// Mode is one logger of a front-end's probes: Open makes it on w and
// returns with it the counts of its writer (nil for a logger without
// one).
type Mode struct {
	Name string
	Open func(b *testing.B, w io.Writer) (Logger, Counts)
}

// FileGoroutines are the goroutine counts of BenchFile's rows.
var FileGoroutines = []int{1, 16, 64, 256}

// BenchFile runs Healthy for each mode and goroutine count, d each, as
// BenchmarkFile/logger=NAME/goroutines=N.
func BenchFile(b *testing.B, modes []Mode, d time.Duration, isReport func([]byte) bool) {
	for _, m := range modes {
		b.Run("logger="+m.Name, func(b *testing.B) {
			for _, g := range FileGoroutines {
				b.Run("goroutines="+strconv.Itoa(g), func(b *testing.B) {
					benchFile(b, m, isReport, func(open func(io.Writer) Logger, f *os.File) (Result, error) {
						return Healthy(open, f, g, d, isReport)
					}, false)
				})
			}
		})
	}
}

// BenchBusy runs Busy for each mode (goroutines burning work before each
// record, for d), as BenchmarkBusy/logger=NAME.
func BenchBusy(b *testing.B, modes []Mode, goroutines int, d, work time.Duration, isReport func([]byte) bool) {
	for _, m := range modes {
		b.Run("logger="+m.Name, func(b *testing.B) {
			benchFile(b, m, isReport, func(open func(io.Writer) Logger, f *os.File) (Result, error) {
				return Busy(open, f, goroutines, d, work, isReport)
			}, false)
		})
	}
}

// BenchOffered runs Offered for each mode at share of the rate that the
// mode named sync writes flat out with the same goroutines and spinners,
// measured first in each round, and reports the offered rate
// (offered/s). It appears as BenchmarkOffered/logger=NAME.
func BenchOffered(b *testing.B, modes []Mode, sync string, goroutines int, d time.Duration, share float64, spinners int, isReport func([]byte) bool) {
	var calibrate Mode
	for _, m := range modes {
		if m.Name == sync {
			calibrate = m
		}
	}
	if calibrate.Open == nil {
		b.Fatalf("no mode %q to calibrate the offered rate on", sync)
	}
	for _, m := range modes {
		b.Run("logger="+m.Name, func(b *testing.B) {
			var rate float64
			benchFile(b, calibrate, isReport, func(open func(io.Writer) Logger, f *os.File) (Result, error) {
				res, err := Offered(open, f, goroutines, d, 1e12, spinners, isReport) // flat out
				rate = share * float64(res.Reached) / res.Elapsed.Seconds()
				return res, err
			}, true)
			benchFile(b, m, isReport, func(open func(io.Writer) Logger, f *os.File) (Result, error) {
				return Offered(open, f, goroutines, d, rate, spinners, isReport)
			}, false)
			b.ReportMetric(rate, "offered/s")
		})
	}
}

// benchFile runs probe once per b.Loop on a new file in b's temporary
// directory, with the logger of m, and reports its result, with the
// cores' round trip measured just before it (core-rt-ns: the VM's
// placement of the cores, which the sinks' throughput follows); a
// calibration runs once and reports nothing.
func benchFile(b *testing.B, m Mode, isReport func([]byte) bool, probe func(open func(io.Writer) Logger, f *os.File) (Result, error), calibration bool) {
	run := func() {
		f, err := os.Create(filepath.Join(b.TempDir(), "log.json"))
		if err != nil {
			b.Fatal(err)
		}
		var counts Counts
		var lg Logger
		var rt time.Duration
		if !calibration {
			rt = machine.CoreRoundTrip(placementRoundTrips)
		}
		res, err := probe(func(w io.Writer) Logger {
			lg, counts = m.Open(b, w)
			return lg
		}, f)
		_ = f.Close()
		if err != nil {
			b.Fatal(err)
		}
		if calibration {
			return
		}
		res.Report(b, counts)
		if rt > 0 {
			b.ReportMetric(float64(rt.Nanoseconds()), "core-rt-ns")
		}
		if lg.Metrics != nil {
			lg.Metrics(b)
		}
	}
	if calibration {
		run()
		return
	}
	for b.Loop() {
		run()
	}
}
