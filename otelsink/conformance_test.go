package otelsink_test

// The behaviour that the SDK asks of any span processor, checked with the
// SDK's tracetest InMemoryExporter (wrapped by testExporter).

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/shardedsink/shardedsink/otelsink"
)

func TestSpansEndedBeforeForceFlushAreExportedByItsReturn(t *testing.T) {
	exp := newTestExporter()
	p := otelsink.NewSpanProcessor(exp, otelsink.WithShards(4), otelsink.WithMaxExportBatchSize(16))
	const goroutines, perRound, rounds = 8, 50, 20
	want := 0
	for round := range rounds {
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for i := range perRound {
					p.OnEnd(stub((round*goroutines+g)*perRound+i, true))
				}
			})
		}
		wg.Wait()
		want += goroutines * perRound
		require.NoError(t, p.ForceFlush(context.Background()))
		require.Len(t, exp.GetSpans(), want, "round %d: spans exported by ForceFlush's return", round)
		require.Equal(t, uint64(want), p.Stats().Exported)
	}
	require.NoError(t, p.Shutdown(context.Background()))
	require.Zero(t, p.Dropped())
	exp.checkContract(t)
}

func TestForceFlushThroughATracerProvider(t *testing.T) {
	exp := newTestExporter()
	p := otelsink.NewSpanProcessor(exp)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p))
	tracer := tp.Tracer("test")
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 100 {
				_, span := tracer.Start(context.Background(), fmt.Sprintf("g%d-%d", g, i))
				span.End()
			}
		})
	}
	wg.Wait()
	require.NoError(t, tp.ForceFlush(context.Background()))
	spans := exp.GetSpans()
	require.Len(t, spans, 400)
	names := map[string]bool{}
	for _, s := range spans {
		names[s.Name] = true
	}
	require.Len(t, names, 400, "every span exported once")
	require.NoError(t, tp.Shutdown(context.Background()))
	require.Equal(t, int32(1), exp.shutdowns.Load(), "the provider's Shutdown shuts the exporter down once")
	exp.checkContract(t)
}

func TestNothingIsExportedAfterShutdown(t *testing.T) {
	exp := newTestExporter()
	p := otelsink.NewSpanProcessor(exp)
	for i := range 100 {
		p.OnEnd(stub(i, true))
	}
	require.NoError(t, p.Shutdown(context.Background()))
	require.Len(t, exp.GetSpans(), 100, "Shutdown drains what was ended before it")
	require.Equal(t, int32(1), exp.shutdowns.Load())

	for i := range 50 {
		p.OnEnd(stub(100+i, true))
	}
	require.NoError(t, p.ForceFlush(context.Background()), "ForceFlush after Shutdown does nothing")
	require.NoError(t, p.Shutdown(context.Background()), "a second Shutdown does nothing and returns nil")
	require.Len(t, exp.GetSpans(), 100)
	require.Equal(t, uint64(50), p.Dropped(), "spans ended after Shutdown are counted as dropped")
	require.Equal(t, int32(1), exp.shutdowns.Load(), "the exporter is shut down once")
	exp.checkContract(t)
}

func TestConcurrentOnEndAndShutdownAccountForEverySpan(t *testing.T) {
	for trial := range 20 {
		exp := newTestExporter()
		// A small queue, so that some spans are dropped at push too.
		p := otelsink.NewSpanProcessor(exp, otelsink.WithShards(4),
			otelsink.WithMaxQueueSize(64), otelsink.WithMaxExportBatchSize(8), quiet)
		var ended atomic.Uint64
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for g := range 8 {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					p.OnEnd(stub(g<<20|i, true))
					ended.Add(1)
				}
			})
		}
		for ended.Load() < 1000 {
			runtime.Gosched()
		}
		shutdownErr := p.Shutdown(context.Background())
		// The producers go on ending spans after Shutdown returned.
		after := ended.Load()
		for ended.Load() < after+1000 {
			runtime.Gosched()
		}
		close(stop)
		wg.Wait()
		require.NoError(t, shutdownErr)

		st := p.Stats()
		require.Equal(t, ended.Load(), st.Exported+st.Failed+st.Dropped,
			"trial %d: every span ended is exported or counted as dropped: %+v", trial, st)
		require.Equal(t, st.Exported, uint64(len(exp.GetSpans())))
		require.Zero(t, st.Queued)
		exp.checkContract(t)
	}
}

func TestUnsampledSpansAreNeverExported(t *testing.T) {
	exp := newTestExporter()
	p := otelsink.NewSpanProcessor(exp)
	for i := range 1000 {
		p.OnEnd(stub(i, i%2 == 0))
	}
	require.NoError(t, p.ForceFlush(context.Background()))
	spans := exp.GetSpans()
	require.Len(t, spans, 500)
	for _, s := range spans {
		require.True(t, s.SpanContext.IsSampled(), "exported %s", s.Name)
	}
	require.NoError(t, p.Shutdown(context.Background()))
	require.Zero(t, p.Dropped(), "unsampled spans are ignored, not dropped")

	// And through a provider that samples nothing.
	exp2 := newTestExporter()
	p2 := otelsink.NewSpanProcessor(exp2)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p2), sdktrace.WithSampler(sdktrace.NeverSample()))
	for range 100 {
		_, span := tp.Tracer("test").Start(context.Background(), "unsampled")
		span.End()
	}
	require.NoError(t, tp.ForceFlush(context.Background()))
	require.Empty(t, exp2.GetSpans())
	require.Zero(t, exp2.exports.Load(), "the exporter is not even called")
	require.NoError(t, tp.Shutdown(context.Background()))
}

func TestExportErrorsAreHandledAndCounted(t *testing.T) {
	errs := recordErrors(t)
	backendDown := errors.New("backend down")
	var failing atomic.Bool
	failing.Store(true)
	exp := newTestExporter()
	exp.hook = func(context.Context, []sdktrace.ReadOnlySpan) error {
		if failing.Load() {
			return backendDown
		}
		return nil
	}
	p := otelsink.NewSpanProcessor(exp, otelsink.WithShards(1), otelsink.WithMaxExportBatchSize(1))
	for i := range 10 {
		p.OnEnd(stub(i, true))
	}
	err := p.ForceFlush(context.Background())
	require.ErrorIs(t, err, backendDown, "ForceFlush reports the exports that failed")
	require.Contains(t, err.Error(), "10 export(s) failed since the previous ForceFlush")
	st := p.Stats()
	require.Equal(t, uint64(10), st.ExportErrors)
	require.Equal(t, uint64(10), st.Failed)
	require.Zero(t, st.Exported)
	handled := errs.all()
	require.Len(t, handled, 10, "every failed export goes to otel.Handle")
	for _, e := range handled {
		require.ErrorIs(t, e, backendDown)
		require.Contains(t, e.Error(), "otelsink: export of 1 spans")
	}

	require.NoError(t, p.ForceFlush(context.Background()), "those failures were reported")

	failing.Store(false)
	p.OnEnd(stub(10, true))
	require.NoError(t, p.ForceFlush(context.Background()), "no export failed since")
	require.Equal(t, uint64(1), p.Stats().Exported)
	require.NoError(t, p.Shutdown(context.Background()))
	exp.checkContract(t)
}

func TestAPanicInTheExporterIsCountedAsAFailure(t *testing.T) {
	errs := recordErrors(t)
	exp := newTestExporter()
	exp.hook = func(context.Context, []sdktrace.ReadOnlySpan) error { panic("exporter bug") }
	p := otelsink.NewSpanProcessor(exp, otelsink.WithShards(1), quiet)
	p.OnEnd(stub(1, true))
	err := p.ForceFlush(context.Background())
	require.ErrorContains(t, err, "panicked: exporter bug")
	require.Equal(t, uint64(1), p.Stats().Failed)
	require.Equal(t, uint64(1), p.Stats().ExporterPanics)
	require.Empty(t, errs.all(), "a panic goes to the logger, at most once a minute, not to otel.Handle")
	// The processor goes on: the export mutex was released.
	exp.hook = nil
	p.OnEnd(stub(2, true))
	require.NoError(t, p.ForceFlush(context.Background()))
	require.NoError(t, p.Shutdown(context.Background()))
	require.Equal(t, uint64(1), p.Stats().Exported)
}

func TestTheExporterIsNeverCalledConcurrently(t *testing.T) {
	exp := newTestExporter()
	exp.hook = func(context.Context, []sdktrace.ReadOnlySpan) error {
		// Stay inside long enough for another worker to arrive.
		for range 20 {
			runtime.Gosched()
		}
		return nil
	}
	p := otelsink.NewSpanProcessor(exp, otelsink.WithShards(4), otelsink.WithMaxExportBatchSize(1))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 500 {
				p.OnEnd(stub(g<<16|i, true))
			}
		})
	}
	wg.Wait()
	require.NoError(t, p.Shutdown(context.Background()))
	st := p.Stats()
	require.Equal(t, uint64(2000), st.Exported+st.Dropped)
	require.Greater(t, exp.exports.Load(), int64(100), "many exports, so that overlaps had their chance")
	exp.checkContract(t)
}

// TestShutdownRunsOnceAndReturnsTheExportersErrorOnce: of concurrent
// Shutdown calls one does the work and returns the exporter's error; the
// others wait for it and return nil, as the BatchSpanProcessor's do (run
// alongside as the reference).
func TestShutdownRunsOnceAndReturnsTheExportersErrorOnce(t *testing.T) {
	shutdownErr := errors.New("exporter flush failed")
	for _, im := range []struct {
		name string
		make func(sdktrace.SpanExporter) sdktrace.SpanProcessor
	}{
		{"BatchSpanProcessor", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor { return sdktrace.NewBatchSpanProcessor(e) }},
		{"otelsink", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor { return otelsink.NewSpanProcessor(e) }},
	} {
		t.Run(im.name, func(t *testing.T) {
			exp := newTestExporter()
			exp.shutdownErr = shutdownErr
			p := im.make(exp)
			p.OnEnd(stub(1, true))
			var wg sync.WaitGroup
			results := make([]error, 4)
			for i := range results {
				wg.Go(func() { results[i] = p.Shutdown(context.Background()) })
			}
			wg.Wait()
			require.ElementsMatch(t, []error{shutdownErr, nil, nil, nil}, results)
			require.Equal(t, int32(1), exp.shutdowns.Load())
			require.Len(t, exp.GetSpans(), 1)
		})
	}
}

func TestOnEndAllocatesNothing(t *testing.T) {
	// AllocsPerRun counts the whole process's allocations, so the drain
	// side must allocate nothing either: a no-op exporter and no export
	// timeout (whose ctx would allocate per export).
	p := otelsink.NewSpanProcessor(tracetest.NewNoopExporter(),
		otelsink.WithMaxQueueSize(1<<16), otelsink.WithExportTimeout(0))
	span := stub(1, true)
	allocs := testing.AllocsPerRun(1000, func() { p.OnEnd(span) })
	require.Zero(t, allocs)
	require.NoError(t, p.Shutdown(context.Background()))
}

func TestTheQueueSizeIsTheTotalOverTheShards(t *testing.T) {
	t.Run("one shard holds exactly the queue size while its worker exports", func(t *testing.T) {
		exp := newTestExporter()
		started, release := make(chan struct{}, 1), make(chan struct{})
		exp.hook = func(context.Context, []sdktrace.ReadOnlySpan) error {
			select {
			case started <- struct{}{}:
			default:
			}
			<-release
			return nil
		}
		p := otelsink.NewSpanProcessor(exp, otelsink.WithShards(1),
			otelsink.WithMaxQueueSize(4), otelsink.WithMaxExportBatchSize(1), quiet)
		require.Equal(t, 4, p.QueueCapacity())
		p.OnEnd(stub(0, true))
		<-started // the worker holds span 0 in its export
		for i := range 10 {
			p.OnEnd(stub(1+i, true))
		}
		st := p.Stats()
		require.Equal(t, uint64(6), st.Dropped)
		require.Equal(t, 4, st.Queued)
		close(release)
		require.NoError(t, p.Shutdown(context.Background()))
		require.Len(t, exp.GetSpans(), 5)
	})
	t.Run("the total is rounded down to a multiple of the shards", func(t *testing.T) {
		p := otelsink.NewSpanProcessor(newTestExporter(), otelsink.WithShards(4), otelsink.WithMaxQueueSize(10))
		require.Equal(t, 8, p.QueueCapacity())
		require.Equal(t, 4, p.Stats().Sink.Shards)
		require.NoError(t, p.Shutdown(context.Background()))
	})
	t.Run("a queue below the default shard count lowers the shard count", func(t *testing.T) {
		p := otelsink.NewSpanProcessor(newTestExporter(), otelsink.WithMaxQueueSize(1))
		require.Equal(t, 1, p.QueueCapacity())
		require.Equal(t, 1, p.Stats().Sink.Shards)
		require.NoError(t, p.Shutdown(context.Background()))
	})
	t.Run("the default is DefaultQueuePerShard spans per shard", func(t *testing.T) {
		p := otelsink.NewSpanProcessor(newTestExporter(), otelsink.WithShards(3))
		require.Equal(t, 3*otelsink.DefaultQueuePerShard, p.QueueCapacity())
		require.NoError(t, p.Shutdown(context.Background()))
	})
}
