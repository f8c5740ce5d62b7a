package otelsink_test

// Behaviour that waits on time, in testing/synctest bubbles: the clock is
// fake, so the durations are exact and the tests take no real time.

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/shardedsink/shardedsink/otelsink"
	"github.com/shardedsink/shardedsink/sink"
)

// blockingExporter returns a testExporter whose exports block until their
// ctx ends (returning ctx.Err()) or release is closed; started receives one
// value when the first export begins.
func blockingExporter() (exp *testExporter, started chan struct{}, release chan struct{}) {
	exp = newTestExporter()
	started, release = make(chan struct{}, 1), make(chan struct{})
	exp.hook = func(ctx context.Context, _ []sdktrace.ReadOnlySpan) error {
		select {
		case started <- struct{}{}:
		default:
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-release:
			return nil
		}
	}
	return exp, started, release
}

func TestTheExportTimeoutIsHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errs := recordErrors(t)
		exp := newTestExporter()
		var took time.Duration
		var cause error
		exp.hook = func(ctx context.Context, _ []sdktrace.ReadOnlySpan) error {
			start := time.Now()
			<-ctx.Done()
			took, cause = time.Since(start), context.Cause(ctx)
			return ctx.Err()
		}
		p := otelsink.NewSpanProcessor(exp, otelsink.WithExportTimeout(250*time.Millisecond))
		p.OnEnd(stub(1, true))
		err := p.ForceFlush(context.Background())
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.ErrorContains(t, err, "1 export(s) failed since the previous ForceFlush")
		require.Equal(t, 250*time.Millisecond, took, "the export's ctx ends at the timeout")
		require.Equal(t, otelsink.ErrExportTimeout, cause)
		require.Equal(t, uint64(1), p.Stats().Failed)
		require.Len(t, errs.all(), 1)
		require.NoError(t, p.Shutdown(context.Background()))
	})
}

func TestAZeroExportTimeoutMeansNoTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		exp := newTestExporter()
		var hasDeadline atomic.Bool
		exp.hook = func(ctx context.Context, _ []sdktrace.ReadOnlySpan) error {
			_, ok := ctx.Deadline()
			hasDeadline.Store(ok)
			return nil
		}
		p := otelsink.NewSpanProcessor(exp, otelsink.WithExportTimeout(0))
		p.OnEnd(stub(1, true))
		require.NoError(t, p.ForceFlush(context.Background()))
		require.False(t, hasDeadline.Load())
		require.NoError(t, p.Shutdown(context.Background()))
	})
}

func TestForceFlushReturnsCtxErrWhenCtxEndsFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		exp, started, release := blockingExporter()
		p := otelsink.NewSpanProcessor(exp)
		p.OnEnd(stub(1, true))
		<-started
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := p.ForceFlush(ctx)
		require.Equal(t, context.DeadlineExceeded, err, "ctx.Err() itself")
		require.Equal(t, 100*time.Millisecond, time.Since(start))

		cancelled, cancel2 := context.WithCancel(context.Background())
		cancel2()
		require.Equal(t, context.Canceled, p.ForceFlush(cancelled), "a ctx that already ended")

		close(release)
		require.NoError(t, p.ForceFlush(context.Background()))
		require.Len(t, exp.GetSpans(), 1, "the span was exported later")
		require.NoError(t, p.Shutdown(context.Background()))
	})
}

// The exporter gives up as Shutdown's ctx ends, so the drain worker exits at
// the very instant of the deadline: Shutdown sees both its ctx ended and the
// workers gone, in either order. Its result must not depend on that order:
// the drain did not complete, so it is ctx.Err() itself.
func TestSpansLeftByAShutdownThatTimedOutCountAsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		exp, started, _ := blockingExporter() // never released: only ctx ends the export
		var exportErr error
		inner := exp.hook
		exp.hook = func(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
			exportErr = inner(ctx, spans)
			return exportErr
		}
		p := otelsink.NewSpanProcessor(exp, otelsink.WithShards(1), otelsink.WithMaxExportBatchSize(1),
			otelsink.WithExportTimeout(0), quiet)
		p.OnEnd(stub(0, true))
		<-started
		for i := range 5 {
			p.OnEnd(stub(1+i, true))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		err := p.Shutdown(ctx)
		require.Equal(t, context.DeadlineExceeded, err, "Shutdown returns ctx.Err() itself")
		require.Equal(t, time.Second, time.Since(start))
		st := p.Stats()
		require.Equal(t, uint64(1), st.Failed, "the export in progress failed")
		require.Equal(t, uint64(5), st.Dropped, "the spans left in the ring count as dropped")
		require.Zero(t, st.Queued)
		synctest.Wait() // Shutdown did not wait for the export: it returns now
		require.Equal(t, context.Canceled, exportErr, "the export in progress was cancelled")
		require.Equal(t, st, p.Stats(), "its return changed no count")
		require.Equal(t, int32(1), exp.shutdowns.Load(), "the exporter is shut down even so, after the export returned")
		exp.checkContract(t)

		// A later call does nothing and returns nil.
		require.NoError(t, p.Shutdown(context.Background()))
	})
}

func TestASecondShutdownHonoursItsOwnCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		exp, started, release := blockingExporter()
		p := otelsink.NewSpanProcessor(exp, otelsink.WithExportTimeout(0))
		p.OnEnd(stub(0, true))
		<-started
		first := make(chan error)
		go func() { first <- p.Shutdown(context.Background()) }()
		synctest.Wait() // the first Shutdown waits for the export
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		require.Equal(t, context.DeadlineExceeded, p.Shutdown(ctx))
		close(release)
		require.NoError(t, <-first)
		require.NoError(t, p.Shutdown(context.Background()))
		require.Len(t, exp.GetSpans(), 1)
	})
}

func TestForceFlushDuringShutdownReturnsTheDrainsResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		exp, started, release := blockingExporter()
		p := otelsink.NewSpanProcessor(exp, otelsink.WithShards(1), otelsink.WithMaxExportBatchSize(1),
			otelsink.WithExportTimeout(0))
		p.OnEnd(stub(0, true))
		<-started
		p.OnEnd(stub(1, true))
		flushed := make(chan error)
		go func() { flushed <- p.ForceFlush(context.Background()) }()
		synctest.Wait()
		shut := make(chan error)
		go func() { shut <- p.Shutdown(context.Background()) }()
		synctest.Wait()
		close(release)
		require.NoError(t, <-shut)
		require.NoError(t, <-flushed)
		require.Len(t, exp.GetSpans(), 2)
	})
}

func TestTheOverloadReportSeesTheDrops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		exp, started, release := blockingExporter()
		var reports []sink.Overload
		p := otelsink.NewSpanProcessor(exp, otelsink.WithName("checkout"), otelsink.WithShards(1),
			otelsink.WithMaxQueueSize(4), otelsink.WithMaxExportBatchSize(1),
			otelsink.WithOverloadReport(time.Second, func(o sink.Overload) { reports = append(reports, o) }))
		p.OnEnd(stub(0, true))
		<-started
		for i := range 10 {
			p.OnEnd(stub(1+i, true))
		}
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, []sink.Overload{{Sink: "checkout", Delta: 6, Total: 6, Interval: time.Second}}, reports)
		close(release)
		require.NoError(t, p.Shutdown(context.Background()))
	})
}

// TestAForceFlushThatAShutdownCutShortSaysSo: a ForceFlush waiting for a
// span when a Shutdown begins returns what that Shutdown's drain did with
// it. Here Shutdown's ctx ends while the exporter holds the first span, so
// the second is dropped, and ForceFlush says so instead of returning nil.
func TestAForceFlushThatAShutdownCutShortSaysSo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		exp, started, release := ignoringExporter(time.Hour)
		p := otelsink.NewSpanProcessor(exp, otelsink.WithShards(1), otelsink.WithMaxExportBatchSize(1), quiet)
		p.OnEnd(stub(0, true))
		<-started
		p.OnEnd(stub(1, true))
		flushed := make(chan error)
		go func() { flushed <- p.ForceFlush(context.Background()) }()
		synctest.Wait() // ForceFlush waits for span 1, behind the held export
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		require.Equal(t, context.DeadlineExceeded, p.Shutdown(ctx))
		close(release)
		err := <-flushed
		require.ErrorIs(t, err, context.DeadlineExceeded, "ForceFlush reports the Shutdown that dropped its span")
		require.ErrorContains(t, err, "Shutdown began while ForceFlush waited")
		st := requireAccounted(t, p, 2)
		require.Equal(t, uint64(1), st.Failed)
		require.Equal(t, uint64(1), st.Dropped)
		spans := exp.GetSpans()
		require.Len(t, spans, 1, "the exporter got span 0 only, from the held export (counted as failed)")
		require.Equal(t, "span-0", spans[0].Name)
		exp.checkContract(t)
	})
}

// ctxRecordingExporter is a testExporter whose exports ignore their ctx
// until release is closed, and whose Shutdown records its ctx.
type ctxRecordingExporter struct {
	*testExporter
	release       chan struct{}
	shutdownCtxOK chan error         // ctx.Err() at the exporter's Shutdown
	shutdownLeft  chan time.Duration // the time its ctx had left then; -1 without a deadline
}

func (e ctxRecordingExporter) Shutdown(ctx context.Context) error {
	e.shutdownCtxOK <- ctx.Err()
	left := time.Duration(-1)
	if d, ok := ctx.Deadline(); ok {
		left = time.Until(d)
	}
	e.shutdownLeft <- left
	return e.testExporter.Shutdown(ctx)
}

// TestTheExporterIsShutDownWithItsOwnCtxAfterACutShortShutdown: when
// Shutdown's ctx ends while an export runs, the exporter is shut down once
// that export has returned, with a ctx of its own bounded by the export
// timeout (not Shutdown's ended ctx, which would keep it from closing its
// connections); its error goes to otel.Handle and is counted.
func TestTheExporterIsShutDownWithItsOwnCtxAfterACutShortShutdown(t *testing.T) {
	for _, tc := range []struct {
		name          string
		exportTimeout time.Duration
		want          time.Duration
	}{
		{"the export timeout", 2 * time.Second, 2 * time.Second},
		{"no export timeout: the default", 0, otelsink.DefaultExportTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				errs := recordErrors(t)
				exp := ctxRecordingExporter{newTestExporter(), make(chan struct{}), make(chan error, 1), make(chan time.Duration, 1)}
				exp.shutdownErr = errors.New("connection already closed")
				exp.hook = func(context.Context, []sdktrace.ReadOnlySpan) error { <-exp.release; return nil }
				p := otelsink.NewSpanProcessor(exp, otelsink.WithShards(1), otelsink.WithBatchTimeout(0),
					otelsink.WithExportTimeout(tc.exportTimeout), quiet)
				p.OnEnd(stub(0, true))
				synctest.Wait() // the export holds span 0
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				defer cancel()
				require.Equal(t, context.DeadlineExceeded, p.Shutdown(ctx))
				time.Sleep(5 * time.Second)
				close(exp.release)
				synctest.Wait()
				require.NoError(t, <-exp.shutdownCtxOK, "the exporter's Shutdown gets a live ctx")
				require.Equal(t, tc.want, <-exp.shutdownLeft)
				require.Equal(t, uint64(1), p.Stats().ExporterShutdownErrors, "its error is counted")
				require.Len(t, errs.all(), 1, "and handed to otel.Handle")
				require.ErrorIs(t, errs.all()[0], exp.shutdownErr)
			})
		})
	}
}

// TestAShutdownCutShortDuringTheBatchTimeoutsExport: the export that the
// batch timeout started (on the timer's goroutine, not a drain worker's)
// holds its batch, ignoring its ctx, when Shutdown begins; Shutdown returns
// when its ctx ends, that batch counts as failed and the span behind it as
// dropped, and the exporter is shut down once the export has returned.
func TestAShutdownCutShortDuringTheBatchTimeoutsExport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		exp, started, release := ignoringExporter(time.Hour)
		p := otelsink.NewSpanProcessor(exp, otelsink.WithShards(2), otelsink.WithBatchTimeout(time.Second), quiet)
		p.OnEnd(stub(0, true))
		p.OnEnd(stub(1, true))
		<-started // a second later: the timer's export of spans 0 and 1
		p.OnEnd(stub(2, true))
		synctest.Wait() // span 2 waits behind it, in a drain worker's hands
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		require.Equal(t, context.DeadlineExceeded, p.Shutdown(ctx))
		require.Equal(t, 100*time.Millisecond, time.Since(start))
		st := requireAccounted(t, p, 3)
		require.Equal(t, uint64(2), st.Failed)
		require.Equal(t, uint64(1), st.Dropped)
		require.Zero(t, exp.shutdowns.Load(), "not under a running export")
		close(release)
		synctest.Wait()
		require.Equal(t, st, p.Stats())
		require.Equal(t, int32(1), exp.shutdowns.Load())
		exp.checkContract(t)
	})
}

// An export that no drain worker makes (the batch timeout's) and that
// stalls makes OnEnd shed as a worker's export does: the worker that
// waits behind it for the export batch times its wait as a call into the
// exporter (lockExport), so a span that finds the ring full waits
// SlowDrain at most. Once a worker has timed an export, the sink judges
// only timed calls; untimed, this wait would count for nothing, and the
// span would wait for the hand-off's bound (HandOffWait, 100 ms).
func TestAStalledTimerExportMakesOnEndShed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		exp, started, release := blockingExporter()
		block := exp.hook
		var exports atomic.Int64
		exp.hook = func(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
			if exports.Add(1) == 1 {
				return nil // the first, a worker's, returns at once
			}
			return block(ctx, spans)
		}
		p := otelsink.NewSpanProcessor(exp, otelsink.WithShards(1), otelsink.WithMaxQueueSize(4),
			otelsink.WithMaxExportBatchSize(2), otelsink.WithBatchTimeout(100*time.Millisecond))
		p.OnEnd(stub(0, true))
		p.OnEnd(stub(1, true)) // the batch fills: the worker exports it
		synctest.Wait()
		require.Equal(t, int64(1), exports.Load())
		p.OnEnd(stub(2, true))
		<-started // the batch timeout's export of span 2 stalls
		p.OnEnd(stub(3, true))
		synctest.Wait() // the worker holds span 3 and waits for the batch
		for i := range 4 {
			p.OnEnd(stub(4+i, true)) // the ring fills
		}
		t0 := time.Now()
		p.OnEnd(stub(8, true))
		require.LessOrEqual(t, time.Since(t0), sink.SlowDrain+time.Millisecond, "OnEnd waited behind a stalled export")
		close(release)
		require.NoError(t, p.Shutdown(context.Background()))
		st := p.Stats()
		require.Equal(t, uint64(1), st.Dropped)
	})
}
