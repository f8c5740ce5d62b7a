package slogsink_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// The benchmarks compare slogsink with slog's synchronous JSON handler over
// the same writer. Each goroutine logs through its own logger made with
// With (a request's or a worker's logger), five attributes in all:
//
//	go test -run '^$' -bench 'Info|Request' -count 10 ./slogsink/ > slog.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /handler slog.txt

// countingWriter counts the bytes written through it. When slow, every
// Write first sleeps 1 ms, as a slow disk or a network hop would.
type countingWriter struct {
	w     io.Writer
	slow  bool
	bytes atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.slow {
		time.Sleep(time.Millisecond)
	}
	c.bytes.Add(int64(len(p)))
	return c.w.Write(p)
}

// benchWriter returns a counting writer of the kind named, over a temporary
// file or over io.Discard behind a 1 ms sleep.
func benchWriter(b *testing.B, kind string) *countingWriter {
	if kind == "slow" {
		return &countingWriter{w: io.Discard, slow: true}
	}
	f, err := os.Create(filepath.Join(b.TempDir(), "log.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = f.Close() })
	return &countingWriter{w: f}
}

// benchHandler is a handler under test and how to finish it.
type benchHandler struct {
	h       slog.Handler
	close   func() // drains what is buffered and stops; nil for the synchronous handler
	dropped func() uint64
	written func(handled int) uint64 // records written, of handled
}

func newBenchHandler(b *testing.B, kind string, shards int, w io.Writer) benchHandler {
	if kind == "sync" {
		return benchHandler{h: slog.NewJSONHandler(w, nil), dropped: func() uint64 { return 0 },
			written: func(handled int) uint64 { return uint64(handled) }}
	}
	h, err := slogsink.New(w, &slogsink.Options{Buffering: logsink.Buffering{Shards: shards}})
	if err != nil {
		b.Fatal(err)
	}
	return benchHandler{
		h: h,
		close: func() {
			if err := h.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
		},
		dropped: h.Dropped,
		written: func(int) uint64 { return h.Written() },
	}
}

// goroutineCounts are the numbers of logging goroutines: 1 (a plain loop)
// and those of 2, 4, 16 and 64 that RunParallel can make exactly, as
// multiples of GOMAXPROCS.
func goroutineCounts() []int {
	out := []int{1}
	for _, g := range []int{2, 4, 16, 64} {
		if g%runtime.GOMAXPROCS(0) == 0 {
			out = append(out, g)
		}
	}
	return out
}

// runLoggers runs b.N calls of logOne over g goroutines, each with its own
// worker number.
func runLoggers(b *testing.B, g int, logOne func(worker int64) func()) {
	if g == 1 {
		log := logOne(0)
		for b.Loop() {
			log()
		}
		return
	}
	b.SetParallelism(g / runtime.GOMAXPROCS(0))
	var workers atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		log := logOne(workers.Add(1))
		for pb.Next() {
			log()
		}
	})
}

// BenchmarkInfo measures one Info call with five attributes.
func BenchmarkInfo(b *testing.B) {
	for _, writer := range []string{"file", "slow"} {
		for _, g := range goroutineCounts() {
			for _, kind := range []string{"sync", "slogsink"} {
				b.Run(fmt.Sprintf("writer=%s/goroutines=%d/handler=%s", writer, g, kind), func(b *testing.B) {
					w := benchWriter(b, writer)
					bh := newBenchHandler(b, kind, 0, w)
					base := slog.New(bh.h)
					var mu sync.Mutex
					var calls []time.Duration
					b.ReportAllocs()
					start := time.Now()
					runLoggers(b, g, func(worker int64) func() {
						lg := base.With("worker", worker)
						n := 0
						return func() {
							if n++; n%16 != 0 {
								lg.Info("request served", "route", "/cart", "status", 200, "bytes", 1234, "user", "ann")
								return
							}
							// Every 16th call is timed.
							t0 := time.Now()
							lg.Info("request served", "route", "/cart", "status", 200, "bytes", 1234, "user", "ann")
							d := time.Since(t0)
							mu.Lock()
							calls = append(calls, d)
							mu.Unlock()
						}
					})
					elapsed := time.Since(start)
					b.StopTimer()
					if bh.close != nil {
						bh.close()
					}
					b.ReportMetric(float64(w.bytes.Load())/float64(b.N), "B-written/op")
					b.ReportMetric(float64(w.bytes.Load())/elapsed.Seconds()/1e6, "MB-written/s")
					b.ReportMetric(float64(bh.written(b.N))/elapsed.Seconds(), "records-written/s")
					b.ReportMetric(100*float64(bh.dropped())/float64(b.N), "%dropped")
					b.ReportMetric(float64(percentile(calls, 0.99).Nanoseconds()), "p99-call-ns")
				})
			}
		}
	}
}

// BenchmarkRequest measures the tail latency of the logging call and of a
// request that logs: a request hashes work bytes (4 KiB, a few µs of CPU,
// so that logging is most of the request and the handler is overloaded; or
// 64 KiB, so that it is not) and logs 8 records, from 8 goroutines per P,
// into a file. It compares the synchronous handler with slogsink at 1, 2,
// GOMAXPROCS and 8 shards.
func BenchmarkRequest(b *testing.B) {
	for _, work := range []int{4 << 10, 64 << 10} {
		b.Run(fmt.Sprintf("work=%dKiB", work>>10), func(b *testing.B) { benchmarkRequest(b, work) })
	}
}

func benchmarkRequest(b *testing.B, work int) {
	shardCounts := slices.Compact(slices.Sorted(slices.Values([]int{1, 2, runtime.GOMAXPROCS(0), 8})))
	kinds := []string{"sync"}
	for _, n := range shardCounts {
		kinds = append(kinds, fmt.Sprintf("slogsink-%d", n))
	}
	for _, kind := range kinds {
		b.Run("handler="+kind, func(b *testing.B) {
			shards := 0
			handler := kind
			if kind != "sync" {
				_, _ = fmt.Sscanf(kind, "slogsink-%d", &shards)
				handler = "slogsink"
			}
			w := benchWriter(b, "file")
			bh := newBenchHandler(b, handler, shards, w)
			base := slog.New(bh.h)
			var mu sync.Mutex
			var reqs, calls []time.Duration
			var workers atomic.Int64
			b.SetParallelism(8)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				lg := base.With("worker", workers.Add(1))
				payload := make([]byte, work)
				var myReqs, myCalls []time.Duration
				for i := 0; pb.Next(); i++ {
					t0 := time.Now()
					sum := sha256.Sum256(payload)
					payload[0] = sum[0]
					for k := range 8 {
						c0 := time.Now()
						lg.Info("step", "request", i, "step", k, "sum", sum[1], "route", "/cart")
						myCalls = append(myCalls, time.Since(c0))
					}
					myReqs = append(myReqs, time.Since(t0))
				}
				mu.Lock()
				reqs = append(reqs, myReqs...)
				calls = append(calls, myCalls...)
				mu.Unlock()
			})
			elapsed := time.Since(start)
			b.StopTimer()
			if bh.close != nil {
				bh.close()
			}
			b.ReportMetric(float64(bh.written(8*b.N))/elapsed.Seconds(), "records-written/s")
			b.ReportMetric(float64(percentile(reqs, 0.99).Nanoseconds()), "p99-req-ns")
			b.ReportMetric(float64(percentile(calls, 0.99).Nanoseconds()), "p99-log-ns")
			b.ReportMetric(float64(percentile(calls, 0.999).Nanoseconds()), "p999-log-ns")
			b.ReportMetric(100*float64(bh.dropped())/float64(8*b.N), "%dropped")
		})
	}
}

// percentile returns the q-quantile of ds (nearest rank), sorting ds.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, int(q*float64(len(ds))))]
}

// BenchmarkBatchSize measures what the batch size does to a drain worker
// that competes with busy loggers for the CPU: Info calls from 16
// goroutines (or GOMAXPROCS, if more) into a file, at batches of 256, 1024
// (the default), 4096 and 16384 records (a whole default ring). max-turn-µs
// is the longest Drain call in wall time, preemptions included; see
// BenchmarkDrainTurn for the time a turn holds a P.
func BenchmarkBatchSize(b *testing.B) {
	g := max(16, runtime.GOMAXPROCS(0))
	g -= g % runtime.GOMAXPROCS(0)
	for _, batch := range []int{256, 1024, 4096, 16384} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			w := benchWriter(b, "file")
			h, err := slogsink.New(w, &slogsink.Options{Buffering: logsink.Buffering{BatchSize: batch}})
			if err != nil {
				b.Fatal(err)
			}
			base := slog.New(h)
			b.ReportAllocs()
			runLoggers(b, g, func(worker int64) func() {
				lg := base.With("worker", worker)
				return func() {
					lg.Info("request served", "route", "/cart", "status", 200, "bytes", 1234, "user", "ann")
				}
			})
			b.StopTimer()
			if err := h.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(w.bytes.Load())/float64(b.N), "B-written/op")
			b.ReportMetric(100*float64(h.Dropped())/float64(b.N), "%dropped")
			b.ReportMetric(float64(slogsink.MaxDrainTurn(h).Microseconds()), "max-turn-µs")
		})
	}
}
