package otelsink_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// One global error handler for the package; tests that look at the
	// errors swap in a recorder with recordErrors.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		if r := errorRecorder.Load(); r != nil {
			r.add(err)
		}
	}))
	goleak.VerifyTestMain(m)
}

// errorRecorder receives what otel.Handle is given, while a test has set it.
var errorRecorder atomic.Pointer[recorder]

type recorder struct {
	mu   sync.Mutex
	errs []error
}

func (r *recorder) add(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

func (r *recorder) all() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

// recordErrors routes otel.Handle to a fresh recorder until the test ends.
func recordErrors(t *testing.T) *recorder {
	r := &recorder{}
	errorRecorder.Store(r)
	t.Cleanup(func() { errorRecorder.Store(nil) })
	return r
}

// stub returns a finished span i, sampled or not, made with the SDK's
// tracetest stubs.
func stub(i int, sampled bool) sdktrace.ReadOnlySpan {
	var flags trace.TraceFlags
	if sampled {
		flags = trace.FlagsSampled
	}
	var sid trace.SpanID
	binary.BigEndian.PutUint64(sid[:], uint64(i)+1)
	return tracetest.SpanStub{
		Name: fmt.Sprint("span-", i),
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: trace.TraceID{1}, SpanID: sid, TraceFlags: flags,
		}),
	}.Snapshot()
}

// testExporter is the SDK's InMemoryExporter with a hook before each export,
// and checks of the SpanExporter contract: ExportSpans never runs
// concurrently, and never after Shutdown. Its Shutdown keeps the spans (the
// InMemoryExporter's own Shutdown forgets them).
type testExporter struct {
	*tracetest.InMemoryExporter
	// hook, when set, runs before the spans are recorded; an error is
	// returned without recording them.
	hook func(ctx context.Context, spans []sdktrace.ReadOnlySpan) error
	// shutdownErr is what Shutdown returns.
	shutdownErr error

	inFlight      atomic.Int32
	overlapped    atomic.Bool
	exports       atomic.Int64
	shutdowns     atomic.Int32
	afterShutdown atomic.Int64
}

func newTestExporter() *testExporter {
	return &testExporter{InMemoryExporter: tracetest.NewInMemoryExporter()}
}

func (e *testExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.inFlight.Add(1) > 1 {
		e.overlapped.Store(true)
	}
	defer e.inFlight.Add(-1)
	e.exports.Add(1)
	if e.shutdowns.Load() > 0 {
		e.afterShutdown.Add(int64(len(spans)))
	}
	if e.hook != nil {
		if err := e.hook(ctx, spans); err != nil {
			return err
		}
	}
	return e.InMemoryExporter.ExportSpans(ctx, spans)
}

func (e *testExporter) Shutdown(context.Context) error {
	e.shutdowns.Add(1)
	return e.shutdownErr
}

// checkContract fails the test if the exporter saw concurrent exports or
// exports after its Shutdown.
func (e *testExporter) checkContract(t *testing.T) {
	t.Helper()
	if e.overlapped.Load() {
		t.Error("ExportSpans ran concurrently with itself")
	}
	if n := e.afterShutdown.Load(); n != 0 {
		t.Errorf("%d spans exported after the exporter's Shutdown", n)
	}
}
