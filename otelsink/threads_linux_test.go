package otelsink_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"golang.org/x/sys/unix"

	"github.com/shardedsink/shardedsink/otelsink"
	"github.com/shardedsink/shardedsink/sink"
)

// threadCPU returns the CPU time that the calling OS thread has used, in
// nanoseconds (CLOCK_THREAD_CPUTIME_ID). The goroutine must be locked to its
// thread for two readings to measure it.
func threadCPU(b *testing.B) int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		b.Fatalf("clock_gettime(CLOCK_THREAD_CPUTIME_ID): %v", err)
	}
	return ts.Nano()
}

// runThreads starts goroutines goroutines, each locked to its own OS thread,
// releases them at once, and has each call op(g) b.N times: a burst of
// b.N spans per goroutine (-benchtime=10000x gives the 10,000). It
// reports cpu-ns/span, the per-thread CPU time summed over the threads and
// divided by the spans; spans/s, all spans over the wall time; allocs/span,
// the process's heap allocations (drain side included) over the spans; and
// ns/op, which testing computes as the wall time over b.N, is the wall time
// per span of one goroutine (B/op and allocs/op are likewise per goroutine
// span, so per G spans: read allocs/span instead).
func runThreads(b *testing.B, goroutines int, op func(g int)) { runItems(b, goroutines, "span", op) }

// runItems is runThreads with the metrics named per unit ("span",
// "record").
func runItems(b *testing.B, goroutines int, unit string, op func(g int)) {
	cpu := make([]int64, goroutines)
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	for g := range goroutines {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			ready.Done()
			<-start
			t0 := threadCPU(b)
			for range b.N {
				op(g)
			}
			cpu[g] = threadCPU(b) - t0
		}()
	}
	ready.Wait()
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	t0 := time.Now()
	close(start)
	done.Wait()
	wall := time.Since(t0)
	b.StopTimer()
	runtime.ReadMemStats(&after)
	var sum int64
	for _, c := range cpu {
		sum += c
	}
	items := float64(b.N) * float64(goroutines)
	b.ReportMetric(float64(sum)/items, "cpu-ns/"+unit)
	b.ReportMetric(items/wall.Seconds(), unit+"s/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/items, "allocs/"+unit)
}

// BenchmarkOnEndThreads: OnEnd on spans made once, from locked threads.
func BenchmarkOnEndThreads(b *testing.B) {
	spans := stubs(256)
	eachCase(b, append(impls(), acceptPathImpls()...), false, func(b *testing.B, im impl, exp *countingExporter, goroutines, _ int) {
		p := im.make(exp)
		runThreads(b, goroutines, func(g int) { p.OnEnd(spans[g%len(spans)]) })
		finish(b, p, nil, exp, int64(b.N)*int64(goroutines))
	})
}

// BenchmarkSpanThreads: whole spans, Start and End through a
// TracerProvider, from locked threads.
func BenchmarkSpanThreads(b *testing.B) {
	eachCase(b, impls(), false, func(b *testing.B, im impl, exp *countingExporter, goroutines, _ int) {
		p := im.make(exp)
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p))
		op := tracerOp(tp.Tracer("bench"))
		runThreads(b, goroutines, func(int) { op() })
		finish(b, p, tp, exp, int64(b.N)*int64(goroutines))
	})
}

// BenchmarkOnEmitThreads: the log processors' OnEmit on a record made once
// (by a LoggerProvider, two attributes), from locked threads, with a no-op
// exporter: otelsink's LogProcessor against sdklog.NewBatchProcessor, both
// with their defaults, at 1, 16 and 64 goroutines; and otelsink with the
// span processor's shape (4 shards per P of 512), for the choice of the
// log defaults.
//
//	go test -run '^$' -bench 'OnEmitThreads' -benchtime=10000x -count=10 .
func BenchmarkOnEmitThreads(b *testing.B) {
	rec := record(0)
	impls := []struct {
		name string
		make func(sdklog.Exporter) sdklog.Processor
	}{
		{"otelsink", func(e sdklog.Exporter) sdklog.Processor { return otelsink.NewLogProcessor(e, quiet) }},
		{"batchprocessor", func(e sdklog.Exporter) sdklog.Processor { return sdklog.NewBatchProcessor(e) }},
		{"otelsink-4-per-P-512-per-shard", func(e sdklog.Exporter) sdklog.Processor {
			n := 4 * runtime.GOMAXPROCS(0)
			return otelsink.NewLogProcessor(e, quiet, otelsink.WithShards(n), otelsink.WithMaxQueueSize(512*n))
		}},
	}
	for _, goroutines := range []int{1, 16, 64} {
		b.Run("g="+itoa(goroutines), func(b *testing.B) {
			for _, im := range impls {
				b.Run("impl="+im.name, func(b *testing.B) {
					exp := &countingLogExporter{}
					p := im.make(exp)
					ctx := context.Background()
					// Each goroutine emits its own record, reused as the
					// SDK reuses its records: OnEmit must copy it.
					recs := make([]sdklog.Record, goroutines)
					for g := range recs {
						recs[g] = rec.Clone()
					}
					runItems(b, goroutines, "record", func(g int) { _ = p.OnEmit(ctx, &recs[g]) })
					finishLog(b, p, exp, int64(b.N)*int64(goroutines))
				})
			}
		})
	}
}

// BenchmarkExportedShare: the share of whole spans exported, and the CPU per
// span, with the processor's defaults and with the settings that could
// raise the share, at 1 and 64 goroutines, no-op exporter: where the
// spans that are not exported are lost, and what buys them back.
//
//	go test -run '^$' -bench 'ExportedShare' -benchtime=10000x -count=5 .
func BenchmarkExportedShare(b *testing.B) {
	variants := []impl{
		{"bsp", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor { return sdktrace.NewBatchSpanProcessor(e) }},
		{"otelsink", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor { return otelsink.NewSpanProcessor(e, quiet) }},
		{"otelsink-shards=2", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor {
			return otelsink.NewSpanProcessor(e, quiet, otelsink.WithShards(2), otelsink.WithMaxQueueSize(4096))
		}},
		{"otelsink-shards=1", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor {
			return otelsink.NewSpanProcessor(e, quiet, otelsink.WithShards(1), otelsink.WithMaxQueueSize(4096))
		}},
		{"otelsink-512-per-shard", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor {
			return otelsink.NewSpanProcessor(e, quiet, otelsink.WithMaxQueueSize(512*otelsink.DefaultShardsPerP*runtime.GOMAXPROCS(0)))
		}},
		{"otelsink-2048-per-shard", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor {
			return otelsink.NewSpanProcessor(e, quiet, otelsink.WithMaxQueueSize(2048*otelsink.DefaultShardsPerP*runtime.GOMAXPROCS(0)))
		}},
		{"otelsink-poll", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor {
			return otelsink.NewSpanProcessor(e, quiet, otelsink.WithIdleMode(sink.IdlePoll))
		}},
	}
	for _, goroutines := range []int{1, 64} {
		b.Run("g="+itoa(goroutines), func(b *testing.B) {
			for _, im := range variants {
				b.Run("impl="+im.name, func(b *testing.B) {
					exp := &countingExporter{}
					p := im.make(exp)
					tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p))
					op := tracerOp(tp.Tracer("bench"))
					runThreads(b, goroutines, func(int) { op() })
					finish(b, p, tp, exp, int64(b.N)*int64(goroutines))
				})
			}
		})
	}
}
