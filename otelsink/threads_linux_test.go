package otelsink_test

import (
	"runtime"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"golang.org/x/sys/unix"
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
func runThreads(b *testing.B, goroutines int, op func(g int)) {
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
	spans := float64(b.N) * float64(goroutines)
	b.ReportMetric(float64(sum)/spans, "cpu-ns/span")
	b.ReportMetric(spans/wall.Seconds(), "spans/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/spans, "allocs/span")
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
