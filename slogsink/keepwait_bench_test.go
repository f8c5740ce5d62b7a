package slogsink_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardedsink/shardedsink/internal/logprobe"
	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// keepWaits are the settings of Options.KeepWait that the KeepWait
// benchmarks compare: off, 1 ms and 10 ms.
var keepWaits = []struct {
	name string
	d    time.Duration
}{{"0", -1}, {"1ms", time.Millisecond}, {"10ms", 10 * time.Millisecond}}

// BenchmarkKeepWait is half of the measurement behind DefaultKeepWait
// (slogsink/testdata/keepwait.sh): the stalled-pipe probe of zapsink and
// zerologsink (64 goroutines log into an os.Pipe whose reader stalls for
// 200 ms of 1 s, or 1 s of 2 s, one call in 100 an Error) through slogsink
// with KeepWait off (-1), 1 ms and 10 ms. kept-lost is the Error records
// logged during the stall that did not reach the pipe; p99-call-ns and
// max-call-ns what a caller waited.
//
//	go test -run '^$' -bench 'KeepWait$' -benchtime 1x ./slogsink/
func BenchmarkKeepWait(b *testing.B) {
	for _, stall := range []struct {
		name     string
		stall, d time.Duration
	}{{"200ms", 200 * time.Millisecond, time.Second}, {"1s", time.Second, 2 * time.Second}} {
		for _, kw := range keepWaits {
			b.Run("stall="+stall.name+"/keepwait="+kw.name, func(b *testing.B) { probeKeepWait(b, kw.d, stall.d, stall.stall, false) })
		}
		// The default KeepWait with a spill directory (Options.SpillDir).
		b.Run("stall="+stall.name+"/keepwait=1ms/spill", func(b *testing.B) { probeKeepWait(b, time.Millisecond, stall.d, stall.stall, true) })
	}
}

// probeKeepWait runs the stalled-pipe probe once per b.Loop through a
// handler with keepWait, and a spill directory when spill is set.
func probeKeepWait(b *testing.B, keepWait, d, stall time.Duration, spill bool) {
	for b.Loop() {
		var h *slogsink.Handler
		res, err := logprobe.Stalled(func(w io.Writer) logprobe.Logger {
			var err error
			opts := &slogsink.Options{Buffering: logsink.Buffering{KeepWait: keepWait}}
			if spill {
				opts.SpillDir = b.TempDir()
			}
			h, err = slogsink.New(w, opts)
			if err != nil {
				b.Fatal(err)
			}
			lg := slog.New(h)
			return logprobe.Logger{
				Log: func(i int, keep bool) {
					if keep {
						lg.Error(logprobe.KeepMark, "i", i)
						return
					}
					lg.Info("request served", "i", i, "route", "/cart", "status", 200)
				},
				Close: func() {
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					if err := h.Close(ctx); err != nil {
						b.Errorf("Close: %v", err)
					}
				},
			}
		}, 64, d, stall, 100, func(line []byte) bool {
			return bytes.Contains(line, []byte(slogsink.DroppedMessage))
		})
		if err != nil {
			b.Fatal(err)
		}
		res.Report(b, func() (uint64, uint64) {
			st := h.Stats()
			return st.Written, st.Written + st.Dropped + st.Errors + st.Abandoned + st.Empty
		})
		b.ReportMetric(float64(h.Stats().WaitedOut), "waited-out")
	}
}

// slowWrites takes d per Write, as a slow disk or a congested pipe does.
type slowWrites struct{ d time.Duration }

func (s slowWrites) Write(p []byte) (int, error) { time.Sleep(s.d); return len(p), nil }

// BenchmarkKeepWaitBurst: 64 goroutines each log 100 Error records at
// once into 2 shards of 1,024 slots whose destination takes 500 µs per
// Write: a burst three times the rings, into a destination that keeps
// draining. dropped is what the burst lost, max-call-ns what a caller
// waited, with KeepWait off (-1), 1 ms and 10 ms.
//
//	go test -run '^$' -bench KeepWaitBurst -benchtime 1x -count 5 ./slogsink/
func BenchmarkKeepWaitBurst(b *testing.B) {
	for _, kw := range keepWaits {
		b.Run("keepwait="+kw.name, func(b *testing.B) {
			for b.Loop() {
				h, err := slogsink.New(slowWrites{500 * time.Microsecond}, &slogsink.Options{Buffering: logsink.Buffering{RingCapacity: 1024, KeepWait: kw.d}})
				if err != nil {
					b.Fatal(err)
				}
				var maxCall atomic.Int64
				start := make(chan struct{})
				var wg sync.WaitGroup
				for g := range 64 {
					lg := slog.New(h).With("g", g)
					wg.Go(func() {
						<-start
						for i := range 100 {
							t0 := time.Now()
							lg.Error("burst", "i", i)
							d := int64(time.Since(t0))
							for m := maxCall.Load(); d > m && !maxCall.CompareAndSwap(m, d); m = maxCall.Load() {
							}
						}
					})
				}
				close(start)
				wg.Wait()
				if err := h.Close(context.Background()); err != nil {
					b.Fatal(err)
				}
				st := h.Stats()
				if got := st.Written + st.Dropped + st.Errors + st.Abandoned + st.Empty; got != 6400 {
					b.Fatalf("Stats = %+v: %d accounted, want 6400", st, got)
				}
				b.ReportMetric(float64(st.Dropped), "dropped")
				b.ReportMetric(float64(st.WaitedOut), "waited-out")
				b.ReportMetric(float64(maxCall.Load()), "max-call-ns")
			}
		})
	}
}
