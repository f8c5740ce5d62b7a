package zerologsink_test

import (
	"bytes"
	"flag"
	"io"
	"log"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/rs/zerolog/diode"

	"github.com/shardedsink/shardedsink/internal/logprobe"
	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/zerologsink"
)

// The goals' probes (bash zerologsink/testdata/bench.sh runs them; the
// table in docs/benchmarks.md is generated from what it writes).
var (
	probeFor   = flag.Duration("probe.for", 2*time.Second, "how long the stalled-pipe and file probes log")
	probeStall = flag.Duration("probe.stall", time.Second, "how long the stalled-pipe probe's reader waits before it drains")
	probeIdle  = flag.Duration("probe.idle", 10*time.Second, "how long the idle probe waits")
)

const probeGoroutines = 64

// probeLogger logs the probe's records through lg: an Info of three
// fields, or an Error whose message is logprobe.KeepMark.
func probeLogger(lg zerolog.Logger, closeFn func()) logprobe.Logger {
	return logprobe.Logger{
		Log: func(i int, keep bool) {
			if keep {
				lg.Error().Int("i", i).Msg(logprobe.KeepMark)
				return
			}
			lg.Info().Int("i", i).Str("route", "/cart").Int("status", 200).Msg("request served")
		},
		Close: closeFn,
	}
}

// newLogger is zerolog with a timestamp, as services log.
func newLogger(w io.Writer) zerolog.Logger { return zerolog.New(w).With().Timestamp().Logger() }

// newDiode is diode.NewWriter as its docs show it (1000 slots, a 10 ms
// poller), counting what its alert reports missed (the "diode-missed"
// metric).
func newDiode(w io.Writer) (diode.Writer, *atomic.Uint64) {
	var missed atomic.Uint64
	d := diode.NewWriter(w, 1000, 10*time.Millisecond, func(n int) { missed.Add(uint64(n)) })
	return d, &missed
}

// collisions counts the lines the diode prints through the log package
// ("Diode set collision"), which go test would otherwise put into the
// benchmark's output; quiet routes them into it for the run of b.
type collisions struct{ n atomic.Uint64 }

func (c *collisions) Write(p []byte) (int, error) {
	c.n.Add(uint64(bytes.Count(p, []byte("collision"))))
	return len(p), nil
}

func quiet(b *testing.B) *collisions {
	c := &collisions{}
	old, flags := log.Writer(), log.Flags()
	log.SetOutput(c)
	b.Cleanup(func() { log.SetOutput(old); log.SetFlags(flags) })
	return c
}

var modes = []logprobe.Mode{
	// The floor: zerolog into io.Discard, whatever the destination; what
	// 64 goroutines on this machine's cores cost a call (its max is the
	// scheduler's: a goroutine preempted in a call).
	{Name: "floor-zerolog-Discard", Open: func(b *testing.B, w io.Writer) (logprobe.Logger, logprobe.Counts) {
		return probeLogger(newLogger(io.Discard), nil), nil
	}},
	{Name: "zerolog", Open: func(b *testing.B, w io.Writer) (logprobe.Logger, logprobe.Counts) {
		return probeLogger(newLogger(w), nil), nil
	}},
	{Name: "zerolog-diode", Open: func(b *testing.B, w io.Writer) (logprobe.Logger, logprobe.Counts) {
		c := quiet(b)
		d, missed := newDiode(w)
		lg := probeLogger(newLogger(d), func() { _ = d.Close() })
		lg.Metrics = func(b *testing.B) {
			b.ReportMetric(float64(missed.Load()), "diode-missed")
			b.ReportMetric(float64(c.n.Load()), "diode-collision-lines")
		}
		return lg, nil
	}},
	{Name: "zerologsink", Open: func(b *testing.B, w io.Writer) (logprobe.Logger, logprobe.Counts) {
		return openZerologsink(b, w, &zerologsink.Options{CloseTimeout: 10 * time.Second})
	}},
}

// openZerologsink opens a zerologsink Writer with opts into w for a probe.
func openZerologsink(b *testing.B, w io.Writer, opts *zerologsink.Options) (logprobe.Logger, logprobe.Counts) {
	zw, err := zerologsink.New(w, opts)
	if err != nil {
		b.Fatal(err)
	}
	counts := func() (uint64, uint64) {
		st := zw.Stats()
		return st.Written, st.Written + st.Dropped + st.Errors + st.Abandoned + st.Empty
	}
	return probeLogger(newLogger(zw), func() {
		if err := zw.Close(); err != nil {
			b.Errorf("Close: %v", err)
		}
	}), counts
}

func isReport(line []byte) bool { return bytes.Contains(line, []byte(zerologsink.DroppedMessage)) }

// BenchmarkStalledPipe is the probe: 64 goroutines log for 2 s
// into an os.Pipe whose reader stalls for the first second; one call in a
// hundred during the stall is an Error.
//
//	go test -run '^$' -bench StalledPipe -benchtime 1x ./zerologsink/
func BenchmarkStalledPipe(b *testing.B) {
	stalledOnly := []logprobe.Mode{
		// The hand-off off: what the longest call was before it.
		{Name: "zerologsink-NoHandOff", Open: func(b *testing.B, w io.Writer) (logprobe.Logger, logprobe.Counts) {
			return openZerologsink(b, w, &zerologsink.Options{CloseTimeout: 10 * time.Second, Buffering: logsink.Buffering{DisableHandOff: true}})
		}},
		// The spill tier: the stalled pipe's events go to disk, up to 1 GiB.
		{Name: "zerologsink-SpillDir", Open: func(b *testing.B, w io.Writer) (logprobe.Logger, logprobe.Counts) {
			return openZerologsink(b, w, &zerologsink.Options{CloseTimeout: 10 * time.Second, Buffering: logsink.Buffering{SpillDir: b.TempDir()}})
		}},
	}
	for _, m := range append(modes[:len(modes):len(modes)], stalledOnly...) {
		b.Run("logger="+m.Name, func(b *testing.B) {
			for b.Loop() {
				var counts logprobe.Counts
				var lg logprobe.Logger
				res, err := logprobe.Stalled(func(w io.Writer) logprobe.Logger {
					lg, counts = m.Open(b, w)
					return lg
				}, probeGoroutines, *probeFor, *probeStall, 100, isReport)
				if err != nil {
					b.Fatal(err)
				}
				res.Report(b, counts)
				if lg.Metrics != nil {
					lg.Metrics(b)
				}
			}
		})
	}
}

// BenchmarkFile: 1, 16, 64 and 256 goroutines log for 2 s into a file.
//
//	go test -run '^$' -bench '^BenchmarkFile$' -benchtime 1x ./zerologsink/
func BenchmarkFile(b *testing.B) { logprobe.BenchFile(b, modes, *probeFor, isReport) }

// BenchmarkBusy: 64 goroutines each burn 20 µs of CPU and then log one
// record, for 2 s, into a file.
//
//	go test -run '^$' -bench Busy -benchtime 1x ./zerologsink/
func BenchmarkBusy(b *testing.B) {
	logprobe.BenchBusy(b, modes, probeGoroutines, *probeFor, 20*time.Microsecond, isReport)
}

// BenchmarkOffered: 64 goroutines log at 90 % of the rate that zerolog
// writes flat out (measured first), while 2 more goroutines keep both
// cores busy, for 2 s, into a file.
//
//	go test -run '^$' -bench Offered -benchtime 1x ./zerologsink/
func BenchmarkOffered(b *testing.B) {
	logprobe.BenchOffered(b, modes, "zerolog", probeGoroutines, *probeFor, 0.9, 2, isReport)
}

// BenchmarkDiscard is the caller's cost, one goroutine, into io.Discard:
// zerolog straight into it against zerolog through a Writer.
//
//	go test -run '^$' -bench Discard ./zerologsink/
func BenchmarkDiscard(b *testing.B) {
	b.Run("logger=zerolog", func(b *testing.B) { discardLoop(b, newLogger(io.Discard)) })
	b.Run("logger=zerologsink", func(b *testing.B) {
		w, err := zerologsink.New(io.Discard, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer w.Close()
		discardLoop(b, newLogger(w))
		st := w.Stats()
		b.ReportMetric(100*float64(st.Dropped)/float64(st.Written+st.Dropped+1), "%dropped")
	})
}

func discardLoop(b *testing.B, lg zerolog.Logger) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		lg.Info().Int("i", i).Str("route", "/cart").Int("status", 200).Msg("request served")
		i++
	}
}

// BenchmarkIdle is the CPU a writer takes with nothing logged, for 10 s,
// after one record: the process's CPU time over the wait, in % of a core;
// the diode's 10 ms poller is the anchor.
//
//	go test -run '^$' -bench Idle -benchtime 1x ./zerologsink/
func BenchmarkIdle(b *testing.B) {
	idle := func(b *testing.B, w io.Writer, closeFn func()) {
		lg := newLogger(w)
		lg.Info().Msg("one")
		time.Sleep(100 * time.Millisecond) // the workers park
		pct, err := logprobe.IdleCPU(*probeIdle)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(pct, "%core-idle")
		closeFn()
	}
	// The floor: the test process alone, no writer (the runtime's and the
	// benchmark's own CPU).
	b.Run("logger=floor-none", func(b *testing.B) {
		for b.Loop() {
			pct, err := logprobe.IdleCPU(*probeIdle)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(pct, "%core-idle")
		}
	})
	b.Run("logger=zerolog-diode", func(b *testing.B) {
		quiet(b)
		for b.Loop() {
			d, _ := newDiode(io.Discard)
			idle(b, d, func() { _ = d.Close() })
		}
	})
	b.Run("logger=zerologsink", func(b *testing.B) {
		for b.Loop() {
			w, err := zerologsink.New(io.Discard, nil)
			if err != nil {
				b.Fatal(err)
			}
			idle(b, w, func() { _ = w.Close() })
		}
	})
}
