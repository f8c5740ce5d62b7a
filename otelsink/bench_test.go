package otelsink_test

// Side-by-side benchmarks of this processor and the SDK's
// BatchSpanProcessor, in one run:
//
//	go test -run '^$' -bench 'Parallel' -count=5 .             # b.RunParallel
//	go test -run '^$' -bench 'Threads' -benchtime=10000x -count=10 .  # locked threads, per-thread CPU, a 10,000-span burst each
//
// Names read BenchmarkX/exporter=E/g=G/impl=I, so that
// `benchstat -col /impl` puts the processors side by side. Every
// sub-benchmark reports exported-% and dropped-% of the sampled spans it
// ended, counted after Shutdown: for otelsink from its Stats (and checked
// against the exporter's count), for the BatchSpanProcessor as ended minus
// exported, since it exposes no drop count.

import (
	"context"
	"log/slog"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/shardedsink/shardedsink/otelsink"
)

// goroutineCounts are the producer counts of every benchmark.
var goroutineCounts = []int{1, 4, 16, 64, 256}

// countingExporter counts the spans it exports; with a delay, each export
// takes that long (honouring ctx), like a slow network exporter.
type countingExporter struct {
	delay    time.Duration
	exported atomic.Int64
}

func (e *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.delay > 0 {
		t := time.NewTimer(e.delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	e.exported.Add(int64(len(spans)))
	return nil
}

func (*countingExporter) Shutdown(context.Context) error { return nil }

// exporters are the two exporters of every benchmark.
var exporters = []struct {
	name  string
	delay time.Duration
}{
	{"noop", 0},
	{"1ms", time.Millisecond},
}

// impl is one processor under test.
type impl struct {
	name string
	make func(sdktrace.SpanExporter) sdktrace.SpanProcessor
}

// quiet sends otelsink's overload reports (an Error record every 5 s while
// it drops) to a discarding logger, so that they do not break the benchmark
// output lines. It changes nothing else.
var quiet = otelsink.WithLogger(slog.New(slog.DiscardHandler))

// impls returns otelsink with its defaults, the BatchSpanProcessor with
// its defaults (a 2,048-span queue), and the BatchSpanProcessor with
// otelsink's default total queue.
func impls() []impl {
	p := otelsink.NewSpanProcessor(&countingExporter{})
	capacity := p.QueueCapacity()
	_ = p.Shutdown(context.Background())
	return []impl{
		{"otelsink", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor {
			return otelsink.NewSpanProcessor(e, quiet)
		}},
		{"bsp", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor { return sdktrace.NewBatchSpanProcessor(e) }},
		{"bsp-samequeue", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor {
			return sdktrace.NewBatchSpanProcessor(e, sdktrace.WithMaxQueueSize(capacity))
		}},
	}
}

// bigQueue is the queue of the accept-path rows: more than the 2,560,000
// spans of 256 goroutines ending 10,000 each, so that nothing is dropped.
const bigQueue = 2_621_440 // 256 × 10,240

// acceptPathImpls returns both processors with a queue of bigQueue spans:
// with -benchtime=10000x nothing is dropped, and OnEnd is measured on its
// accept path alone. (Only for OnEnd on stubs: whole spans held in a queue
// this long would take gigabytes.)
func acceptPathImpls() []impl {
	return []impl{
		{"otelsink-bigq", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor {
			return otelsink.NewSpanProcessor(e, otelsink.WithMaxQueueSize(bigQueue), quiet)
		}},
		{"bsp-bigq", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor {
			return sdktrace.NewBatchSpanProcessor(e, sdktrace.WithMaxQueueSize(bigQueue))
		}},
	}
}

// stubs returns n sampled finished spans, made once with the tracetest
// stubs: OnEnd is then measured without the SDK's span creation.
func stubs(n int) []sdktrace.ReadOnlySpan {
	out := make([]sdktrace.ReadOnlySpan, n)
	for i := range out {
		out[i] = stub(i, true)
	}
	return out
}

// finish shuts p (or tp, when not nil) down, and reports the exported and
// dropped shares of the ended spans. For otelsink it checks that every span
// is accounted for.
func finish(b *testing.B, p sdktrace.SpanProcessor, tp *sdktrace.TracerProvider, exp *countingExporter, ended int64) {
	b.Helper()
	b.StopTimer()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var err error
	if tp != nil {
		err = tp.Shutdown(ctx)
	} else {
		err = p.Shutdown(ctx)
	}
	if err != nil {
		b.Fatalf("Shutdown: %v", err)
	}
	exported := exp.exported.Load()
	dropped := ended - exported
	if sp, ok := p.(*otelsink.SpanProcessor); ok {
		st := sp.Stats()
		if int64(st.Exported) != exported || int64(st.Exported+st.Failed+st.Dropped) != ended {
			b.Errorf("otelsink lost count: ended %d, exporter saw %d, stats %+v", ended, exported, st)
		}
		dropped = int64(st.Dropped)
	}
	b.ReportMetric(100*float64(exported)/float64(ended), "exported-%")
	b.ReportMetric(100*float64(dropped)/float64(ended), "dropped-%")
}

// parallelism returns the b.SetParallelism for about want goroutines, and
// the goroutine count it gives (a multiple of GOMAXPROCS).
func parallelism(want int) (p, goroutines int) {
	procs := runtime.GOMAXPROCS(0)
	p = max(1, want/procs)
	return p, p * procs
}

// eachCase runs body for every exporter, goroutine count and impl, with
// parallelism or thread counts named as the body will use them.
func eachCase(b *testing.B, all []impl, parallel bool, body func(b *testing.B, im impl, exp *countingExporter, goroutines, par int)) {
	for _, e := range exporters {
		b.Run("exporter="+e.name, func(b *testing.B) {
			seen := map[int]bool{}
			for _, want := range goroutineCounts {
				par, g := 0, want
				if parallel {
					par, g = parallelism(want)
				}
				if seen[g] {
					continue
				}
				seen[g] = true
				b.Run("g="+itoa(g), func(b *testing.B) {
					for _, im := range all {
						b.Run("impl="+im.name, func(b *testing.B) {
							body(b, im, &countingExporter{delay: e.delay}, g, par)
						})
					}
				})
			}
		})
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var buf [20]byte
	i := len(buf)
	for ; n > 0; n /= 10 {
		i--
		buf[i] = byte('0' + n%10)
	}
	return string(buf[i:])
}

// BenchmarkOnEndParallel: the processor's own cost, OnEnd on spans made
// once, from b.RunParallel goroutines.
func BenchmarkOnEndParallel(b *testing.B) {
	spans := stubs(256)
	eachCase(b, impls(), true, func(b *testing.B, im impl, exp *countingExporter, _, par int) {
		p := im.make(exp)
		var next atomic.Int64
		b.ReportAllocs()
		b.SetParallelism(par)
		b.ResetTimer()
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			s := spans[next.Add(1)%int64(len(spans))]
			for pb.Next() {
				p.OnEnd(s)
			}
		})
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "spans/s")
		finish(b, p, nil, exp, int64(b.N))
	})
}

// BenchmarkSpanParallel: a whole span, Start and End through a
// TracerProvider (default sampler: every span sampled).
func BenchmarkSpanParallel(b *testing.B) {
	eachCase(b, impls(), true, func(b *testing.B, im impl, exp *countingExporter, _, par int) {
		p := im.make(exp)
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p))
		tracer := tp.Tracer("bench")
		ctx := context.Background()
		b.ReportAllocs()
		b.SetParallelism(par)
		b.ResetTimer()
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_, span := tracer.Start(ctx, "op")
				span.End()
			}
		})
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "spans/s")
		finish(b, p, tp, exp, int64(b.N))
	})
}

// tracerOp returns the whole-span operation used by the thread harness.
func tracerOp(tracer trace.Tracer) func() {
	ctx := context.Background()
	return func() {
		_, span := tracer.Start(ctx, "op")
		span.End()
	}
}
