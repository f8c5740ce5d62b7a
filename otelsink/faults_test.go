package otelsink_test

// Faulty exporters and callers: an exporter that calls Shutdown from inside
// ExportSpans, one that ignores its ctx, one that calls runtime.Goexit, and
// options beyond the sink's limits.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/shardedsink/shardedsink/otelsink"
	"github.com/shardedsink/shardedsink/sink"
)

// requireAccounted fails the test unless every one of ended sampled spans
// is counted once in Exported, Failed or Dropped.
func requireAccounted(t *testing.T, p *otelsink.SpanProcessor, ended uint64) otelsink.Stats {
	t.Helper()
	st := p.Stats()
	require.Equal(t, ended, st.Exported+st.Failed+st.Dropped,
		"exported %d + failed %d + dropped %d = ended %d", st.Exported, st.Failed, st.Dropped, ended)
	return st
}

func TestShutdownFromInsideExportSpansReturnsAtOnceAndALaterShutdownWorks(t *testing.T) {
	exp := newTestExporter()
	var p *otelsink.SpanProcessor
	inner := make(chan error, 1)
	exp.hook = func(ctx context.Context, _ []sdktrace.ReadOnlySpan) error {
		if exp.exports.Load() != 1 {
			return nil
		}
		if err := p.ForceFlush(ctx); !errors.Is(err, sink.ErrCalledFromDrain) {
			inner <- fmt.Errorf("ForceFlush with the export's ctx returned %v", err)
			return nil
		}
		res := make(chan error, 1)
		go func() { res <- p.Shutdown(ctx) }()
		select {
		case err := <-res:
			inner <- err
		case <-time.After(2 * time.Second):
			inner <- errors.New("Shutdown called with the export's ctx was still waiting after 2s")
		}
		return nil
	}
	p = otelsink.NewSpanProcessor(exp, otelsink.WithShards(1), otelsink.WithBatchTimeout(0))
	p.OnEnd(stub(0, true))
	err := <-inner
	require.ErrorIs(t, err, sink.ErrCalledFromDrain, "Shutdown from inside ExportSpans returns at once")

	// The processor still runs: later spans are exported, and a Shutdown
	// from outside does the work.
	p.OnEnd(stub(1, true))
	require.NoError(t, p.ForceFlush(context.Background()))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, p.Shutdown(ctx))
	require.Equal(t, int32(1), exp.shutdowns.Load(), "the exporter was shut down")
	require.Len(t, exp.GetSpans(), 2)
	requireAccounted(t, p, 2)
	exp.checkContract(t)
}

// ignoringExporter returns a testExporter whose exports ignore their ctx:
// each blocks until release is closed or hold has passed.
func ignoringExporter(hold time.Duration) (exp *testExporter, started, release chan struct{}) {
	exp = newTestExporter()
	started, release = make(chan struct{}, 1), make(chan struct{})
	exp.hook = func(context.Context, []sdktrace.ReadOnlySpan) error {
		select {
		case started <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-time.After(hold):
		}
		return nil
	}
	return exp, started, release
}

func TestShutdownHonoursCtxWhenTheExporterIgnoresIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		exp, started, release := ignoringExporter(10 * time.Second)
		p := otelsink.NewSpanProcessor(exp, otelsink.WithShards(1), otelsink.WithMaxExportBatchSize(1), quiet)
		p.OnEnd(stub(0, true))
		<-started
		for i := range 3 {
			p.OnEnd(stub(1+i, true))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		require.Equal(t, context.DeadlineExceeded, p.Shutdown(ctx))
		require.Equal(t, 200*time.Millisecond, time.Since(start), "Shutdown returns when its ctx ends")

		// The counts are final when Shutdown returns: the batch in the
		// exporter's hands failed, the spans in the ring were dropped.
		st := requireAccounted(t, p, 4)
		require.Equal(t, uint64(1), st.Failed, "the batch in flight counts as failed")
		require.Equal(t, uint64(3), st.Dropped)
		require.Zero(t, st.Exported)
		require.Zero(t, exp.shutdowns.Load(), "the exporter is not shut down under a running export")

		// The exporter's late return changes nothing; then it is shut down.
		close(release)
		synctest.Wait()
		require.Equal(t, st, p.Stats(), "the late return of the export changes no count")
		require.Equal(t, int32(1), exp.shutdowns.Load(), "the exporter is shut down once its export returned")
		require.NoError(t, p.Shutdown(context.Background()), "later calls do nothing and return nil")
		exp.checkContract(t)
	})
}

func TestShutdownWithALiveCtxStillWaitsForTheExport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		exp, started, _ := ignoringExporter(3 * time.Second)
		p := otelsink.NewSpanProcessor(exp, otelsink.WithShards(1))
		p.OnEnd(stub(0, true))
		<-started
		start := time.Now()
		require.NoError(t, p.Shutdown(context.Background()))
		require.Equal(t, 3*time.Second, time.Since(start))
		st := requireAccounted(t, p, 1)
		require.Equal(t, uint64(1), st.Exported)
		require.Equal(t, int32(1), exp.shutdowns.Load())
	})
}

func TestAnExporterThatCallsGoexitLosesNoSpanUncounted(t *testing.T) {
	exp := newTestExporter()
	var lost atomic.Uint64
	exp.hook = func(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
		if exp.exports.Load() == 1 {
			lost.Store(uint64(len(spans)))
			runtime.Goexit()
		}
		return nil
	}
	p := otelsink.NewSpanProcessor(exp, otelsink.WithShards(1), otelsink.WithMaxExportBatchSize(4), quiet)
	for i := range 4 {
		p.OnEnd(stub(i, true))
	}
	_ = p.ForceFlush(context.Background()) // the Goexit is reported here or counted
	for i := range 4 {
		p.OnEnd(stub(4+i, true))
	}
	require.NoError(t, p.ForceFlush(context.Background()))
	require.NoError(t, p.Shutdown(context.Background()))
	st := requireAccounted(t, p, 8)
	require.NotZero(t, lost.Load())
	require.Equal(t, 8-lost.Load(), st.Exported)
	require.Equal(t, lost.Load(), st.Failed, "the batch of the export that called Goexit failed")
	require.Equal(t, uint64(1), st.ExporterPanics)
}

// logCounter is a slog.Handler that keeps the records with a given message
// prefix.
type logCounter struct {
	mu      sync.Mutex
	prefix  string
	records []slog.Record
}

func (*logCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h *logCounter) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if strings.HasPrefix(r.Message, h.prefix) {
		h.records = append(h.records, r.Clone())
	}
	return nil
}
func (h *logCounter) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logCounter) WithGroup(string) slog.Handler      { return h }

func (h *logCounter) all() []slog.Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]slog.Record(nil), h.records...)
}

func attr(r slog.Record, key string) slog.Value {
	var v slog.Value
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value
			return false
		}
		return true
	})
	return v
}

func TestExporterPanicsAreCountedAndLoggedAtMostOnceAMinute(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &logCounter{prefix: "otelsink: the exporter panicked"}
		exp := newTestExporter()
		exp.hook = func(context.Context, []sdktrace.ReadOnlySpan) error {
			if exp.exports.Load()%2 == 0 {
				runtime.Goexit()
			}
			panic("exporter bug")
		}
		p := otelsink.NewSpanProcessor(exp, otelsink.WithShards(1), otelsink.WithMaxExportBatchSize(1),
			otelsink.WithLogger(slog.New(logs)))
		for i := range 6 {
			p.OnEnd(stub(i, true))
			_ = p.ForceFlush(context.Background())
		}
		require.Equal(t, uint64(6), p.Stats().ExporterPanics)
		recs := logs.all()
		require.Len(t, recs, 1, "one report in the first minute")
		require.Contains(t, attr(recs[0], "stack").String(), "panic", "the first report carries the panic's stack")

		time.Sleep(time.Minute)
		p.OnEnd(stub(6, true))
		_ = p.ForceFlush(context.Background()) // export 7 panics
		recs = logs.all()
		require.Len(t, recs, 2, "a minute later, one more")
		require.Equal(t, uint64(6), attr(recs[1], "faults_since_last_report").Uint64())
		require.Equal(t, uint64(7), attr(recs[1], "faults_total").Uint64())
		require.NoError(t, p.Shutdown(context.Background()))
		st := requireAccounted(t, p, 7)
		require.Equal(t, uint64(7), st.Failed)
		require.Equal(t, uint64(7), st.ExporterPanics)
	})
}

func TestOptionsBeyondTheSinksLimitsAreInvalidOptions(t *testing.T) {
	tests := []struct {
		name string
		opts []otelsink.Option
		want string
	}{
		{"too many shards", []otelsink.Option{otelsink.WithShards(sink.MaxShards + 1)},
			fmt.Sprintf("WithShards(%d)", sink.MaxShards+1)},
		{"a shard past the ring limit", []otelsink.Option{otelsink.WithShards(1), otelsink.WithMaxQueueSize(sink.MaxRingCapacity + 1)},
			fmt.Sprintf("WithMaxQueueSize(%d)", sink.MaxRingCapacity+1)},
		{"a shard past the ring limit with two shards", []otelsink.Option{otelsink.WithShards(2), otelsink.WithMaxQueueSize(2*sink.MaxRingCapacity + 2)},
			fmt.Sprintf("WithMaxQueueSize(%d)", 2*sink.MaxRingCapacity+2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := otelsink.New(newTestExporter(), tt.opts...)
			require.Nil(t, p)
			require.ErrorIs(t, err, otelsink.ErrInvalidOption)
			require.ErrorContains(t, err, tt.want)
			defer func() {
				r := recover()
				perr, ok := r.(error)
				require.True(t, ok, "NewSpanProcessor panics with an error, got %v", r)
				require.ErrorIs(t, perr, otelsink.ErrInvalidOption)
			}()
			otelsink.NewSpanProcessor(newTestExporter(), tt.opts...)
		})
	}
	// The largest values the sink takes are accepted.
	p, err := otelsink.New(newTestExporter(), otelsink.WithShards(1), otelsink.WithMaxQueueSize(1<<16))
	require.NoError(t, err)
	require.NoError(t, p.Shutdown(context.Background()))
}

func TestForceFlushAfterShutdownReturnsNilEvenWithAnEndedCtx(t *testing.T) {
	p := otelsink.NewSpanProcessor(newTestExporter())
	require.NoError(t, p.Shutdown(context.Background()))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, p.ForceFlush(ctx))
}

// slowShutdownExporter's Shutdown ignores its ctx and takes hold.
type slowShutdownExporter struct {
	*testExporter
	hold time.Duration
}

func (e slowShutdownExporter) Shutdown(ctx context.Context) error {
	time.Sleep(e.hold)
	return e.testExporter.Shutdown(ctx)
}

func TestShutdownHonoursCtxWhenTheExportersShutdownIgnoresIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errs := recordErrors(t)
		exp := slowShutdownExporter{newTestExporter(), time.Hour}
		exp.shutdownErr = errors.New("late shutdown error")
		p := otelsink.NewSpanProcessor(exp)
		p.OnEnd(stub(0, true))
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		require.Equal(t, context.DeadlineExceeded, p.Shutdown(ctx))
		require.Equal(t, time.Second, time.Since(start))
		requireAccounted(t, p, 1)
		require.Equal(t, uint64(1), p.Stats().Exported, "the drain had finished: the counts are final")
		time.Sleep(time.Hour)
		synctest.Wait()
		require.Equal(t, int32(1), exp.shutdowns.Load())
		require.Len(t, errs.all(), 1, "the exporter's late error goes to otel.Handle")
	})
}

// TestAGoexitInTheExportThatABatchFillsKeepsTheRestOfTheBatch: a drain
// worker's items complete the export batch and the rest start the next
// one; when that export calls runtime.Goexit (ending the worker), the items
// not yet in a batch are kept, and exported later.
func TestAGoexitInTheExportThatABatchFillsKeepsTheRestOfTheBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		exp := newTestExporter()
		exp.hook = func(context.Context, []sdktrace.ReadOnlySpan) error {
			if exp.exports.Load() == 1 {
				runtime.Goexit()
			}
			return nil
		}
		p := otelsink.NewSpanProcessor(exp, otelsink.WithShards(1), otelsink.WithMaxExportBatchSize(4),
			otelsink.WithBatchTimeout(time.Hour), quiet)
		shutdownAtEnd(t, p)
		for i := range 3 {
			p.OnEnd(stub(i, true))
		}
		synctest.Wait() // spans 0 to 2 wait in the export batch
		p.OnEnd(stub(3, true))
		p.OnEnd(stub(4, true))
		p.OnEnd(stub(5, true))
		synctest.Wait() // 3 fills the batch, whose export calls Goexit; 4 and 5 are kept
		require.ErrorContains(t, p.ForceFlush(context.Background()), "called runtime.Goexit",
			"ForceFlush exports 4 and 5, and reports the failed export")
		require.NoError(t, p.Shutdown(context.Background()))
		st := requireAccounted(t, p, 6)
		require.Equal(t, uint64(4), st.Failed, "the batch whose export called Goexit")
		require.Equal(t, uint64(2), st.Exported, "the two spans after it")
		require.Zero(t, st.Dropped)
		require.Equal(t, uint64(1), st.ExporterPanics)
	})
}
