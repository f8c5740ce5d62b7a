// Command sloghandler shows slogsink, an slog.Handler on the sink: records
// are formatted by the request that logs, the writer is never waited for,
// records are written in batches, and when the writer falls behind the
// handler sheds records, counts them, and says so in the log itself.
//
// It runs -goroutines request handlers that each serve -records requests
// (each waits -work, as if for a database, then logs one record) through
// the handler into a writer that takes -write-delay per Write, as a slow
// disk or network would, and prints how many records were written, in how
// many writes, and how many were shed. With -print the records go to stdout.
//
//	go run ./examples/sloghandler                        # keeps up: nothing shed
//	go run ./examples/sloghandler -write-delay 50ms      # a slow writer: records shed, callers unaffected
//	go run ./examples/sloghandler -goroutines 2 -records 3 -print
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/slogsink"
)

func main() {
	goroutines := flag.Int("goroutines", 32, "request handlers logging at once")
	records := flag.Int("records", 200, "requests each handler serves, one record each")
	work := flag.Duration("work", 100*time.Microsecond, "time each request waits before it logs")
	delay := flag.Duration("write-delay", time.Millisecond, "time each Write of the log writer takes")
	toStdout := flag.Bool("print", false, "write the records to stdout")
	flag.Parse()

	out := &slowWriter{delay: *delay, w: io.Discard}
	if *toStdout {
		out.w = os.Stdout
	}
	if err := run(out, *goroutines, *records, *work, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "sloghandler:", err)
		os.Exit(1)
	}
}

// run logs goroutines*records records through slogsink into out and
// reports to report. It fails unless written + dropped = logged.
func run(out *slowWriter, goroutines, records int, work time.Duration, report io.Writer) error {
	h, err := slogsink.New(out, &slogsink.Options{Buffering: logsink.Buffering{RingCapacity: 1024}})
	if err != nil {
		return err
	}
	logger := slog.New(h).With("service", "checkout")

	start := time.Now()
	var slowest atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		reqLog := logger.With("worker", g) // a handler of its own: its records keep their order
		wg.Go(func() {
			for i := range records {
				time.Sleep(work)
				t0 := time.Now()
				reqLog.Info("request served", "route", "/cart", "status", 200, "request", i)
				d := int64(time.Since(t0))
				for m := slowest.Load(); d > m && !slowest.CompareAndSwap(m, d); m = slowest.Load() {
				}
			}
		})
	}
	wg.Wait()
	logging := time.Since(start)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	total := goroutines * records
	st := h.Stats()
	fmt.Fprintf(report, "logged %d records in %v (slowest Info call %v)\n", total, logging.Round(time.Millisecond), time.Duration(slowest.Load()))
	fmt.Fprintf(report, "written %d records in %d writes; shed %d (%.1f %%), reported in the log by %d %q records\n",
		st.Written, out.writes.Load(), st.Dropped, 100*float64(st.Dropped)/float64(total), out.reports.Load(), slogsink.DroppedMessage)
	if got := st.Written + st.Dropped + st.Errors + st.Abandoned; got != uint64(total) {
		return fmt.Errorf("written %d + dropped %d + errors %d + abandoned %d != logged %d", st.Written, st.Dropped, st.Errors, st.Abandoned, total)
	}
	return nil
}

// slowWriter takes delay per Write and counts the writes and the drop
// reports in them.
type slowWriter struct {
	delay   time.Duration
	w       io.Writer
	writes  atomic.Int64
	reports atomic.Int64
}

func (s *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(s.delay)
	s.writes.Add(1)
	s.reports.Add(int64(bytes.Count(p, []byte(slogsink.DroppedMessage))))
	return s.w.Write(p)
}
