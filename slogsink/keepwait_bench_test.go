package slogsink_test

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/shardedsink/shardedsink/internal/logprobe"
	"github.com/shardedsink/shardedsink/slogsink"
)

var (
	kwFor   = flag.Duration("keepwait.for", time.Second, "how long BenchmarkKeepWait's goroutines log")
	kwStall = flag.Duration("keepwait.stall", 20*time.Millisecond, "how long BenchmarkKeepWait's pipe reader stalls before it drains")
)

// BenchmarkKeepWait is the measurement behind DefaultKeepWait: the
// stalled-pipe probe of zapsink and zerologsink (64 goroutines log into an
// os.Pipe whose reader stalls, one call in 100 an Error) through slogsink
// with KeepWait off (-1), 1 ms and 10 ms. kept-lost is the Error records
// logged during the stall that did not reach the pipe; p99-call-ns and
// max-call-ns what a caller waited.
//
//	go test -run '^$' -bench KeepWait -benchtime 1x ./slogsink/ -keepwait.stall 20ms
//	go test -run '^$' -bench KeepWait -benchtime 1x ./slogsink/ -keepwait.stall 1s -keepwait.for 2s
func BenchmarkKeepWait(b *testing.B) {
	for _, kw := range []struct {
		name string
		d    time.Duration
	}{{"0", -1}, {"1ms", time.Millisecond}, {"10ms", 10 * time.Millisecond}} {
		b.Run("keepwait="+kw.name, func(b *testing.B) {
			for b.Loop() {
				var h *slogsink.Handler
				res, err := logprobe.Stalled(func(w io.Writer) logprobe.Logger {
					var err error
					h, err = slogsink.New(w, &slogsink.Options{KeepWait: kw.d})
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
				}, 64, *kwFor, *kwStall, 100, func(line []byte) bool {
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
		})
	}
}
