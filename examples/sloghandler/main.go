// Command sloghandler shows an slog.Handler built on the sink: logging never
// blocks a request, records are written in batches, and under overload the
// handler sheds records and counts them instead of slowing the callers down.
//
// It runs -goroutines request handlers that each serve -records requests
// (each waits -work, as if for a database, then logs one record) through the
// handler into a writer that takes -write-delay per Write, as a slow disk or
// network would, and prints how many records were written, in how many
// writes, and how many were shed. With -print the records go to stdout.
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

	"github.com/shardedsink/shardedsink/sink"
)

func main() {
	goroutines := flag.Int("goroutines", 32, "request handlers logging at once")
	records := flag.Int("records", 200, "requests each handler serves, one record each")
	work := flag.Duration("work", 100*time.Microsecond, "time each request waits before it logs")
	delay := flag.Duration("write-delay", time.Millisecond, "time each Write of the log writer takes")
	toStdout := flag.Bool("print", false, "write the records to stdout")
	flag.Parse()

	out := &countingWriter{delay: *delay, w: io.Discard}
	if *toStdout {
		out.w = os.Stdout
	}
	h, err := NewHandler(out, Options{Sink: sink.Config[entry]{RingCapacity: 1024}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "sloghandler:", err)
		os.Exit(1)
	}
	logger := slog.New(h).With("service", "checkout")

	start := time.Now()
	var slowest atomic.Int64
	var wg sync.WaitGroup
	for g := range *goroutines {
		wg.Go(func() {
			reqLog := logger.With("worker", g)
			for i := range *records {
				time.Sleep(*work)
				t0 := time.Now()
				reqLog.Info("request served", "route", "/cart", "status", 200, "request", i)
				if d := int64(time.Since(t0)); d > slowest.Load() {
					slowest.Store(d) // racy maximum, good enough for a demo
				}
			}
		})
	}
	wg.Wait()
	logging := time.Since(start)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "sloghandler: close:", err)
		os.Exit(1)
	}
	total := *goroutines * *records
	fmt.Fprintf(os.Stderr, "logged %d records in %v (slowest Info call %v)\n", total, logging.Round(time.Millisecond), time.Duration(slowest.Load()))
	fmt.Fprintf(os.Stderr, "written %d records in %d writes; shed %d (%.1f %%)\n",
		out.lines.Load(), out.writes.Load(), h.Dropped(), 100*float64(h.Dropped())/float64(total))
}

// countingWriter counts writes and lines and takes delay per Write.
type countingWriter struct {
	delay  time.Duration
	w      io.Writer
	writes atomic.Int64
	lines  atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	time.Sleep(c.delay)
	c.writes.Add(1)
	c.lines.Add(int64(bytes.Count(p, []byte("\n"))))
	return c.w.Write(p)
}
