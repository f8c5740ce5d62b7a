package zapsink_test

import (
	"bytes"
	"context"
	"flag"
	"io"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/shardedsink/shardedsink/internal/logprobe"
	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/zapsink"
)

// The goals' probes (bash zapsink/testdata/bench.sh runs them; the table in
// docs/benchmarks.md is generated from what it writes).
var (
	probeFor   = flag.Duration("probe.for", 2*time.Second, "how long the stalled-pipe and file probes log")
	probeStall = flag.Duration("probe.stall", time.Second, "how long the stalled-pipe probe's reader waits before it drains")
	probeIdle  = flag.Duration("probe.idle", 10*time.Second, "how long the idle probe waits")
)

const probeGoroutines = 64

// benchEncoder is zap's production JSON encoder, with the time.
func benchEncoder() zapcore.Encoder { return zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()) }

// probeLogger logs the probe's records through lg: an Info of three
// fields, or an Error whose message is logprobe.KeepMark.
func probeLogger(lg *zap.Logger, closeFn func()) logprobe.Logger {
	return logprobe.Logger{
		Log: func(i int, keep bool) {
			if keep {
				lg.Error(logprobe.KeepMark, zap.Int("i", i))
				return
			}
			lg.Info("request served", zap.Int("i", i), zap.String("route", "/cart"), zap.Int("status", 200))
		},
		Close: closeFn,
	}
}

// statsOf returns the written and the counted records of a zapsink
// writer.
func statsOf(stats func() logsink.Stats) logprobe.Counts {
	return func() (uint64, uint64) {
		st := stats()
		return st.Written, st.Written + st.Dropped + st.Errors + st.Abandoned + st.Empty
	}
}

var modes = []logprobe.Mode{
	// The floor: zap's own core into io.Discard, whatever the
	// destination; what 64 goroutines on this machine's cores cost a call
	// (its max is the scheduler's: a goroutine preempted in a call).
	{Name: "floor-zap-Discard", Open: func(b *testing.B, w io.Writer) (logprobe.Logger, logprobe.Counts) {
		return probeLogger(zap.New(zapcore.NewCore(benchEncoder(), zapcore.AddSync(io.Discard), zapcore.DebugLevel)), nil), nil
	}},
	{Name: "zap-AddSync", Open: func(b *testing.B, w io.Writer) (logprobe.Logger, logprobe.Counts) {
		return probeLogger(zap.New(zapcore.NewCore(benchEncoder(), zapcore.AddSync(w), zapcore.DebugLevel)), nil), nil
	}},
	{Name: "zap-BufferedWriteSyncer", Open: func(b *testing.B, w io.Writer) (logprobe.Logger, logprobe.Counts) {
		ws := &zapcore.BufferedWriteSyncer{WS: zapcore.AddSync(w)}
		lg := zap.New(zapcore.NewCore(benchEncoder(), ws, zapcore.DebugLevel))
		return probeLogger(lg, func() { _ = ws.Stop() }), nil
	}},
	{Name: "zapsink-Core", Open: func(b *testing.B, w io.Writer) (logprobe.Logger, logprobe.Counts) {
		core, err := zapsink.NewCore(benchEncoder(), w, zapcore.DebugLevel, nil)
		if err != nil {
			b.Fatal(err)
		}
		return probeLogger(zap.New(core), func() { closeWithin(b, core.Close) }), statsOf(core.Stats)
	}},
	{Name: "zapsink-WriteSyncer", Open: func(b *testing.B, w io.Writer) (logprobe.Logger, logprobe.Counts) {
		ws, err := zapsink.NewWriteSyncer(w, nil)
		if err != nil {
			b.Fatal(err)
		}
		lg := zap.New(zapcore.NewCore(benchEncoder(), ws, zapcore.DebugLevel))
		return probeLogger(lg, func() { closeWithin(b, ws.Close) }), statsOf(ws.Stats)
	}},
}

func closeWithin(b *testing.B, close func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := close(ctx); err != nil {
		b.Errorf("Close: %v", err)
	}
}

func isReport(line []byte) bool {
	return bytes.Contains(line, []byte(zapsink.DroppedMessage)) || bytes.Contains(line, []byte("logsink: dropped records"))
}

// BenchmarkStalledPipe is the probe: 64 goroutines log for 2 s
// into an os.Pipe whose reader stalls for the first second; one call in a
// hundred during the stall is an Error.
//
//	go test -run '^$' -bench StalledPipe -benchtime 1x ./zapsink/
func BenchmarkStalledPipe(b *testing.B) {
	coreMode := func(name string, opts func(b *testing.B) *zapsink.Options) logprobe.Mode {
		return logprobe.Mode{Name: name, Open: func(b *testing.B, w io.Writer) (logprobe.Logger, logprobe.Counts) {
			core, err := zapsink.NewCore(benchEncoder(), w, zapcore.DebugLevel, opts(b))
			if err != nil {
				b.Fatal(err)
			}
			return probeLogger(zap.New(core), func() { closeWithin(b, core.Close) }), statsOf(core.Stats)
		}}
	}
	stalledOnly := []logprobe.Mode{
		// The hand-off off: what the longest call was before it.
		coreMode("zapsink-Core-NoHandOff", func(*testing.B) *zapsink.Options {
			return &zapsink.Options{Buffering: logsink.Buffering{DisableHandOff: true}}
		}),
		// The spill tier: the stalled pipe's records go to disk, up to 1 GiB.
		coreMode("zapsink-Core-SpillDir", func(b *testing.B) *zapsink.Options {
			return &zapsink.Options{Buffering: logsink.Buffering{SpillDir: b.TempDir()}}
		}),
	}
	for _, m := range append(modes[:len(modes):len(modes)], stalledOnly...) {
		b.Run("logger="+m.Name, func(b *testing.B) {
			for b.Loop() {
				var counts logprobe.Counts
				res, err := logprobe.Stalled(func(w io.Writer) logprobe.Logger {
					lg, c := m.Open(b, w)
					counts = c
					return lg
				}, probeGoroutines, *probeFor, *probeStall, 100, isReport)
				if err != nil {
					b.Fatal(err)
				}
				res.Report(b, counts)
			}
		})
	}
}

// BenchmarkFile: 1, 16, 64 and 256 goroutines log for 2 s into a file.
//
//	go test -run '^$' -bench '^BenchmarkFile$' -benchtime 1x ./zapsink/
func BenchmarkFile(b *testing.B) { logprobe.BenchFile(b, modes, *probeFor, isReport) }

// BenchmarkBusy: 64 goroutines each burn 20 µs of CPU and then log one
// record, for 2 s, into a file.
//
//	go test -run '^$' -bench Busy -benchtime 1x ./zapsink/
func BenchmarkBusy(b *testing.B) {
	logprobe.BenchBusy(b, modes, probeGoroutines, *probeFor, 20*time.Microsecond, isReport)
}

// BenchmarkOffered: 64 goroutines log at 90 % of the rate that zap-AddSync
// writes flat out (measured first), while 2 more goroutines keep both
// cores busy, for 2 s, into a file.
//
//	go test -run '^$' -bench Offered -benchtime 1x ./zapsink/
func BenchmarkOffered(b *testing.B) {
	logprobe.BenchOffered(b, modes, "zap-AddSync", probeGoroutines, *probeFor, 0.9, 2, isReport)
}

// BenchmarkDiscard is the caller's cost, one goroutine, into io.Discard:
// zap's own JSON core against zapsink's Core with the same encoder.
//
//	go test -run '^$' -bench Discard ./zapsink/
func BenchmarkDiscard(b *testing.B) {
	b.Run("logger=zap", func(b *testing.B) {
		lg := zap.New(zapcore.NewCore(benchEncoder(), zapcore.AddSync(io.Discard), zapcore.DebugLevel))
		discardLoop(b, lg)
	})
	b.Run("logger=zapsink-Core", func(b *testing.B) {
		core, err := zapsink.NewCore(benchEncoder(), io.Discard, zapcore.DebugLevel, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer closeWithin(b, core.Close)
		discardLoop(b, zap.New(core))
		st := core.Stats()
		b.ReportMetric(100*float64(st.Dropped)/float64(st.Written+st.Dropped+1), "%dropped")
	})
}

func discardLoop(b *testing.B, lg *zap.Logger) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		lg.Info("request served", zap.Int("i", i), zap.String("route", "/cart"), zap.Int("status", 200))
		i++
	}
}

// BenchmarkIdle is the CPU a Core takes with nothing logged, for 10 s,
// after one record: the process's CPU time over the wait, in % of a core.
//
//	go test -run '^$' -bench Idle -benchtime 1x ./zapsink/
func BenchmarkIdle(b *testing.B) {
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
	b.Run("logger=zapsink-Core", func(b *testing.B) {
		for b.Loop() {
			core, err := zapsink.NewCore(benchEncoder(), io.Discard, zapcore.DebugLevel, nil)
			if err != nil {
				b.Fatal(err)
			}
			zap.New(core).Info("one")
			_ = core.Sync()
			time.Sleep(100 * time.Millisecond) // the workers park
			pct, err := logprobe.IdleCPU(*probeIdle)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(pct, "%core-idle")
			closeWithin(b, core.Close)
		}
	})
}
