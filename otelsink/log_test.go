package otelsink_test

// The LogProcessor against the sdklog.Processor contract, with an exporter
// modelled on the SDK's own test exporter (sdk/log's testExporter): it keeps
// copies of the records and checks that its calls never overlap and that
// nothing follows its Shutdown.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"github.com/shardedsink/shardedsink/otelsink"
	"github.com/shardedsink/shardedsink/sink"
)

type logTestExporter struct {
	// exportHook, when set, runs before the records are kept; an error is
	// returned without keeping them.
	exportHook    func(ctx context.Context, records []sdklog.Record) error
	forceFlushErr error
	shutdownErr   error

	mu      sync.Mutex
	records []sdklog.Record
	calls   []string

	inCall        atomic.Int32
	overlapped    atomic.Bool
	afterShutdown atomic.Int32
	shutdowns     atomic.Int32
}

func (e *logTestExporter) enter(call string) func() {
	if e.inCall.Add(1) > 1 {
		e.overlapped.Store(true)
	}
	if e.shutdowns.Load() > 0 {
		e.afterShutdown.Add(1)
	}
	e.mu.Lock()
	e.calls = append(e.calls, call)
	e.mu.Unlock()
	return func() { e.inCall.Add(-1) }
}

func (e *logTestExporter) Export(ctx context.Context, records []sdklog.Record) error {
	defer e.enter("Export")()
	if e.exportHook != nil {
		if err := e.exportHook(ctx, records); err != nil {
			return err
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range records {
		e.records = append(e.records, r.Clone())
	}
	return nil
}

func (e *logTestExporter) ForceFlush(context.Context) error {
	defer e.enter("ForceFlush")()
	return e.forceFlushErr
}

func (e *logTestExporter) Shutdown(context.Context) error {
	defer e.enter("Shutdown")()
	e.shutdowns.Add(1)
	return e.shutdownErr
}

func (e *logTestExporter) got() []sdklog.Record {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.records)
}

func (e *logTestExporter) callLog() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.calls)
}

func (e *logTestExporter) checkContract(t *testing.T) {
	t.Helper()
	if e.overlapped.Load() {
		t.Error("the exporter's calls overlapped")
	}
	if n := e.afterShutdown.Load(); n != 0 {
		t.Errorf("%d exporter calls after its Shutdown", n)
	}
}

// capture is a Processor that keeps a copy of the last record.
type capture struct{ last sdklog.Record }

func (*capture) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (c *capture) OnEmit(_ context.Context, r *sdklog.Record) error     { c.last = r.Clone(); return nil }
func (*capture) Shutdown(context.Context) error                         { return nil }
func (*capture) ForceFlush(context.Context) error                       { return nil }

// record returns a record made by a LoggerProvider (so with the SDK's
// attribute limits), with body i and two attributes.
func record(i int) sdklog.Record {
	c := &capture{}
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(c))
	var r log.Record
	r.SetBody(attribute.IntValue(i))
	r.SetSeverity(log.SeverityInfo)
	r.AddAttributes(attribute.Int("i", i), attribute.String("k", "v"))
	lp.Logger("test").Emit(context.Background(), r)
	_ = lp.Shutdown(context.Background())
	return c.last
}

func TestLogRecordsEmittedThroughALoggerProviderAreExportedByForceFlush(t *testing.T) {
	exp := &logTestExporter{}
	p := otelsink.NewLogProcessor(exp, otelsink.WithShards(4), otelsink.WithMaxExportBatchSize(16))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(p))
	logger := lp.Logger("test")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				var r log.Record
				r.SetBody(attribute.StringValue(fmt.Sprintf("g%d-%d", g, i)))
				r.AddAttributes(attribute.Int("g", g))
				logger.Emit(context.Background(), r)
			}
		})
	}
	wg.Wait()
	require.NoError(t, lp.ForceFlush(context.Background()))
	got := exp.got()
	require.Len(t, got, 800)
	bodies := map[string]bool{}
	for _, r := range got {
		bodies[r.Body().AsString()] = true
		require.Equal(t, 1, r.AttributesLen())
		require.Equal(t, "test", r.InstrumentationScope().Name)
	}
	require.Len(t, bodies, 800, "every record exported once")
	require.NoError(t, lp.Shutdown(context.Background()))
	st := p.Stats()
	require.Equal(t, uint64(800), st.Exported)
	require.Equal(t, []string{"ForceFlush", "Shutdown"}, exp.callLog()[len(exp.callLog())-2:],
		"the LoggerProvider's Shutdown flushes the exporter, then shuts it down")
	exp.checkContract(t)
}

func TestOnEmitCopiesTheRecordTheSDKReuses(t *testing.T) {
	exp := &logTestExporter{}
	started, release := make(chan struct{}, 1), make(chan struct{})
	exp.exportHook = func(context.Context, []sdklog.Record) error {
		select {
		case started <- struct{}{}:
		default:
		}
		<-release
		return nil
	}
	p := otelsink.NewLogProcessor(exp, otelsink.WithShards(1), otelsink.WithBatchTimeout(0))
	r := record(1)
	require.Equal(t, 2, r.AttributesLen())
	require.NoError(t, p.OnEmit(context.Background(), &r))
	<-started
	// The caller reuses its record while the export holds the copy: with
	// -race, a processor that kept the record itself races here.
	r.SetBody(attribute.IntValue(2))
	r.AddAttributes(attribute.Int("a", 1), attribute.Int("b", 2), attribute.Int("c", 3), attribute.Int("d", 4))
	close(release)
	require.NoError(t, p.ForceFlush(context.Background()))
	got := exp.got()
	require.Len(t, got, 1)
	require.Equal(t, int64(1), got[0].Body().AsInt64())
	require.Equal(t, 2, got[0].AttributesLen())
	require.NoError(t, p.Shutdown(context.Background()))
}

func TestOnEmitAllocatesNothingForARecordWithInlineAttributes(t *testing.T) {
	p := otelsink.NewLogProcessor(&logTestExporter{}, otelsink.WithMaxQueueSize(1<<16), quiet)
	r := record(1)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() { _ = p.OnEmit(ctx, &r) })
	require.Zero(t, allocs)
	require.NoError(t, p.Shutdown(context.Background()))
}

func TestLogShutdownDrainsFlushesAndShutsTheExporterDownOnce(t *testing.T) {
	exp := &logTestExporter{shutdownErr: errors.New("exporter shutdown failed")}
	p := otelsink.NewLogProcessor(exp)
	for i := range 100 {
		r := record(i)
		require.NoError(t, p.OnEmit(context.Background(), &r))
	}
	err := p.Shutdown(context.Background())
	require.ErrorContains(t, err, "exporter shutdown failed")
	require.Len(t, exp.got(), 100, "Shutdown drains what was emitted before it")
	calls := exp.callLog()
	require.Equal(t, []string{"ForceFlush", "Shutdown"}, calls[len(calls)-2:])

	// After Shutdown: no-ops that return nil (the records are counted).
	r := record(100)
	require.NoError(t, p.OnEmit(context.Background(), &r))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, p.ForceFlush(cancelled))
	require.NoError(t, p.Shutdown(context.Background()), "a second Shutdown does nothing and returns nil (sdklog.Processor's contract)")
	require.Equal(t, int32(1), exp.shutdowns.Load())
	st := p.Stats()
	require.Equal(t, uint64(100), st.Exported)
	require.Equal(t, uint64(1), st.Dropped, "the record emitted after Shutdown")
	exp.checkContract(t)
}

func TestLogForceFlushReportsExportAndExporterFlushErrors(t *testing.T) {
	errs := recordErrors(t)
	down := errors.New("backend down")
	exp := &logTestExporter{forceFlushErr: errors.New("flush failed")}
	exp.exportHook = func(context.Context, []sdklog.Record) error { return down }
	p := otelsink.NewLogProcessor(exp, otelsink.WithShards(1), otelsink.WithMaxExportBatchSize(1))
	for i := range 3 {
		r := record(i)
		require.NoError(t, p.OnEmit(context.Background(), &r))
	}
	err := p.ForceFlush(context.Background())
	require.ErrorIs(t, err, down)
	require.ErrorContains(t, err, "3 export(s) failed")
	require.ErrorContains(t, err, "flush failed")
	require.Len(t, errs.all(), 3, "every failed export goes to otel.Handle")
	require.Equal(t, uint64(3), p.Stats().Failed)
	exp.forceFlushErr = nil
	require.NoError(t, p.ForceFlush(context.Background()))
	require.NoError(t, p.Shutdown(context.Background()))
	exp.checkContract(t)
}

func TestLogShutdownHonoursCtxWhenTheExporterIgnoresIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		exp := &logTestExporter{}
		started, release := make(chan struct{}, 1), make(chan struct{})
		var held atomic.Uint64
		exp.exportHook = func(_ context.Context, records []sdklog.Record) error {
			select {
			case started <- struct{}{}:
				held.Store(uint64(len(records)))
			default:
			}
			select {
			case <-release:
			case <-time.After(time.Hour):
			}
			return nil
		}
		p := otelsink.NewLogProcessor(exp, otelsink.WithShards(1), otelsink.WithMaxExportBatchSize(2), quiet)
		for i := range 2 {
			r := record(i)
			require.NoError(t, p.OnEmit(context.Background(), &r))
		}
		<-started
		for i := range 3 {
			r := record(2 + i)
			require.NoError(t, p.OnEmit(context.Background(), &r))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		require.Equal(t, context.DeadlineExceeded, p.Shutdown(ctx))
		require.Equal(t, 300*time.Millisecond, time.Since(start))
		st := p.Stats()
		require.Equal(t, held.Load(), st.Failed, "the batch in the exporter's hands")
		require.Equal(t, 5-held.Load(), st.Dropped)
		close(release)
		synctest.Wait()
		require.Equal(t, st, p.Stats())
		require.Equal(t, []string{"Export", "ForceFlush", "Shutdown"}, exp.callLog(),
			"once its export returned, the exporter is flushed and shut down, with a ctx of its own")
		exp.checkContract(t)
	})
}

func TestLogShutdownFromInsideExportReturnsAtOnce(t *testing.T) {
	exp := &logTestExporter{}
	var p *otelsink.LogProcessor
	inner := make(chan error, 1)
	exp.exportHook = func(ctx context.Context, _ []sdklog.Record) error {
		select {
		case inner <- p.Shutdown(ctx):
		default:
		}
		return nil
	}
	p = otelsink.NewLogProcessor(exp, otelsink.WithShards(1), otelsink.WithBatchTimeout(0))
	r := record(0)
	require.NoError(t, p.OnEmit(context.Background(), &r))
	require.ErrorIs(t, <-inner, sink.ErrCalledFromDrain)
	require.NoError(t, p.Shutdown(context.Background()))
	require.Len(t, exp.got(), 1)
}

func TestConcurrentOnEmitAndShutdownAccountForEveryRecord(t *testing.T) {
	base := record(0)
	for range 3 {
		exp := &logTestExporter{}
		p := otelsink.NewLogProcessor(exp, otelsink.WithShards(4), otelsink.WithMaxQueueSize(64),
			otelsink.WithMaxExportBatchSize(8), quiet)
		var emitted atomic.Uint64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				r := base.Clone()
				r.SetBody(attribute.IntValue(g))
				for {
					select {
					case <-stop:
						return
					default:
					}
					_ = p.OnEmit(context.Background(), &r)
					emitted.Add(1)
				}
			})
		}
		for emitted.Load() < 1000 {
			time.Sleep(time.Millisecond)
		}
		flushCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = p.ForceFlush(flushCtx)
		cancel()
		require.NoError(t, p.Shutdown(context.Background()))
		close(stop)
		wg.Wait()
		st := p.Stats()
		require.Equal(t, emitted.Load(), st.Exported+st.Failed+st.Dropped)
		require.Equal(t, st.Exported, uint64(len(exp.got())))
		exp.checkContract(t)
	}
}

func TestBadLogOptionsAreErrorsThatNameTheOption(t *testing.T) {
	_, err := otelsink.NewLog(nil, otelsink.WithMaxQueueSize(0), otelsink.WithBatchTimeout(-time.Second))
	require.ErrorIs(t, err, otelsink.ErrInvalidOption)
	require.ErrorContains(t, err, "exporter = nil")
	require.ErrorContains(t, err, "WithMaxQueueSize(0)")
	require.ErrorContains(t, err, "WithBatchTimeout(-1s)")
	require.PanicsWithError(t, err.Error(), func() {
		otelsink.NewLogProcessor(nil, otelsink.WithMaxQueueSize(0), otelsink.WithBatchTimeout(-time.Second))
	})
}

func TestLogProcessorNamesAndEnabled(t *testing.T) {
	p := otelsink.NewLogProcessor(&logTestExporter{})
	require.Regexp(t, `^otelsink_log/\d+$`, p.Name())
	require.True(t, p.Enabled(context.Background(), sdklog.EnabledParameters{}))
	require.NoError(t, p.OnEmit(context.Background(), nil), "a nil record is ignored")
	require.NoError(t, p.Shutdown(context.Background()))
	require.Zero(t, p.Stats().Dropped)
}

// blockingFlushExporter's ForceFlush ignores its ctx and blocks until
// release is closed.
type blockingFlushExporter struct {
	*logTestExporter
	release chan struct{}
}

func (e blockingFlushExporter) ForceFlush(ctx context.Context) error {
	<-e.release
	return e.logTestExporter.ForceFlush(ctx)
}

func TestLogForceFlushHonoursCtxWhenTheExportersForceFlushIgnoresIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		exp := blockingFlushExporter{&logTestExporter{}, make(chan struct{})}
		p := otelsink.NewLogProcessor(exp)
		r := record(0)
		require.NoError(t, p.OnEmit(context.Background(), &r))
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		require.Equal(t, context.DeadlineExceeded, p.ForceFlush(ctx))
		require.Equal(t, 200*time.Millisecond, time.Since(start))
		require.Len(t, exp.got(), 1, "the record was exported before the exporter's ForceFlush")
		close(exp.release)
		require.NoError(t, p.Shutdown(context.Background()))
		exp.checkContract(t)
	})
}
