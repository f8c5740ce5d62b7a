package otelsink_test

// Where the SDK's own batch processors define the behaviour (the order of
// the exporter's calls under ForceFlush and Shutdown, calls after Shutdown,
// the environment variables against the options), each scenario runs
// through the SDK's processor as the reference and through otelsink, in the
// same test, and the two must agree; where they may not (a difference
// otelsink documents), the test says so and checks the difference.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/shardedsink/shardedsink/otelsink"
)

// callLog is an exporter of spans and of log records that logs its calls,
// with the batch size of each export and the time left to the deadline of
// its ctx ("-" without one), and can hold its exports until released.
type callLog struct {
	mu       sync.Mutex
	calls    []string
	held     chan struct{} // when not nil, exports wait until it is closed
	started  chan struct{} // when not nil, receives a value as each held export begins
	err      error         // returned by Shutdown
	exported int
}

func (e *callLog) log(call string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = append(e.calls, call)
}

func (e *callLog) export(ctx context.Context, n int) error {
	left := "-"
	if d, ok := ctx.Deadline(); ok {
		left = time.Until(d).String()
	}
	e.log(fmt.Sprintf("Export(%d, %s)", n, left))
	if e.held != nil {
		if e.started != nil {
			e.started <- struct{}{}
		}
		<-e.held
	}
	e.mu.Lock()
	e.exported += n
	e.mu.Unlock()
	return nil
}

func (e *callLog) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	return e.export(ctx, len(spans))
}

func (e *callLog) Export(ctx context.Context, records []sdklog.Record) error {
	return e.export(ctx, len(records))
}

func (e *callLog) ForceFlush(context.Context) error { e.log("ForceFlush"); return nil }

func (e *callLog) Shutdown(context.Context) error { e.log("Shutdown"); return e.err }

func (e *callLog) result() ([]string, int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.calls), e.exported
}

// spanRefs are the span processors of a reference test: the SDK's, then
// otelsink's, each made with the options of the test.
type spanRef struct {
	name string
	make func(e sdktrace.SpanExporter) sdktrace.SpanProcessor
}

// logRefs likewise for log processors.
type logRef struct {
	name string
	make func(e sdklog.Exporter) sdklog.Processor
}

// bothAgree runs scenario on each processor and requires the same outcome,
// which it returns.
func bothAgree[O any](t *testing.T, names [2]string, run func(t *testing.T, i int) O) O {
	t.Helper()
	var got [2]O
	for i, name := range names {
		t.Run(name, func(t *testing.T) { got[i] = run(t, i) })
	}
	require.Equal(t, got[0], got[1], "otelsink (second) behaves as %s (first)", names[0])
	return got[1]
}

// afterShutdown is what a scenario of calls after Shutdown observed: the
// errors as their texts ("" for nil), since the SDK may wrap an exporter's
// error in errors.Join where otelsink returns it as it is.
type afterShutdown struct {
	First, Second, SecondEnded, Flush string
	Calls                             []string
	Exported                          int
}

// errText is err.Error(), or "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestCallsAfterShutdownAreIgnoredAsByTheBSP(t *testing.T) {
	shutdownErr := errors.New("exporter shutdown failed")
	refs := [2]spanRef{
		{"BatchSpanProcessor", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor { return sdktrace.NewBatchSpanProcessor(e) }},
		{"otelsink", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor { return otelsink.NewSpanProcessor(e, quiet) }},
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	var flushEnded [2]error
	got := bothAgree(t, [2]string{refs[0].name, refs[1].name}, func(t *testing.T, i int) (o afterShutdown) {
		synctest.Test(t, func(t *testing.T) {
			exp := &callLog{err: shutdownErr}
			p := refs[i].make(exp)
			for j := range 3 {
				p.OnEnd(stub(j, true))
			}
			o.First = errText(p.Shutdown(context.Background()))
			p.OnEnd(stub(3, true))
			o.Flush = errText(p.ForceFlush(context.Background()))
			flushEnded[i] = p.ForceFlush(ended)
			o.Second = errText(p.Shutdown(context.Background()))
			o.SecondEnded = errText(p.Shutdown(ended))
			synctest.Wait()
			o.Calls, o.Exported = exp.result()
		})
		return o
	})
	require.Equal(t, afterShutdown{
		First: shutdownErr.Error(), Calls: []string{"Export(3, 30s)", "Shutdown"}, Exported: 3,
	}, got, "the first Shutdown returns the exporter's error; later calls do nothing and return nil")
	// The one difference: the BSP looks at ctx before it looks whether it is
	// shut down; otelsink ignores a ForceFlush after Shutdown whatever its
	// ctx, as sdktrace.SpanProcessor's contract says.
	require.Equal(t, [2]error{context.Canceled, nil}, flushEnded)
}

func TestCallsAfterShutdownDoNothingAndReturnNilAsByTheBatchProcessor(t *testing.T) {
	shutdownErr := errors.New("exporter shutdown failed")
	refs := [2]logRef{
		{"BatchProcessor", func(e sdklog.Exporter) sdklog.Processor { return sdklog.NewBatchProcessor(e) }},
		{"otelsink", func(e sdklog.Exporter) sdklog.Processor { return otelsink.NewLogProcessor(e, quiet) }},
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	got := bothAgree(t, [2]string{refs[0].name, refs[1].name}, func(t *testing.T, i int) (o afterShutdown) {
		synctest.Test(t, func(t *testing.T) {
			exp := &callLog{err: shutdownErr}
			p := refs[i].make(exp)
			for j := range 3 {
				r := record(j)
				require.NoError(t, p.OnEmit(context.Background(), &r))
			}
			o.First = errText(p.Shutdown(context.Background()))
			r := record(3)
			require.NoError(t, p.OnEmit(context.Background(), &r))
			o.Flush = errText(errors.Join(p.ForceFlush(context.Background()), p.ForceFlush(ended)))
			o.Second = errText(p.Shutdown(context.Background()))
			o.SecondEnded = errText(p.Shutdown(ended))
			synctest.Wait()
			o.Calls, o.Exported = exp.result()
		})
		return o
	})
	require.Equal(t, afterShutdown{
		First: shutdownErr.Error(), Calls: []string{"Export(3, 30s)", "ForceFlush", "Shutdown"}, Exported: 3,
	}, got, "later calls perform no operation and return nil (sdklog.Processor's contract)")
}

func TestForceFlushAndShutdownCallTheExporterInTheBatchProcessorsOrder(t *testing.T) {
	refs := [2]logRef{
		{"BatchProcessor", func(e sdklog.Exporter) sdklog.Processor {
			return sdklog.NewBatchProcessor(e, sdklog.WithExportMaxBatchSize(4))
		}},
		{"otelsink", func(e sdklog.Exporter) sdklog.Processor {
			return otelsink.NewLogProcessor(e, otelsink.WithMaxExportBatchSize(4))
		}},
	}
	got := bothAgree(t, [2]string{refs[0].name, refs[1].name}, func(t *testing.T, i int) (calls []string) {
		synctest.Test(t, func(t *testing.T) {
			exp := &callLog{}
			p := refs[i].make(exp)
			emit := func(n int) {
				for j := range n {
					r := record(j)
					require.NoError(t, p.OnEmit(context.Background(), &r))
				}
				synctest.Wait() // in the processor's hands before the next call
			}
			emit(3)
			require.NoError(t, p.ForceFlush(context.Background()))
			require.NoError(t, p.ForceFlush(context.Background()))
			// A full batch, then two records: the BatchProcessor's worker
			// takes a batch when the queue holds a full one, at a moment that
			// depends on the scheduler (with six records at once it may
			// take four or five), so the test offers exactly one.
			emit(4)
			emit(2)
			require.NoError(t, p.Shutdown(context.Background()))
			calls, _ = exp.result()
		})
		return calls
	})
	require.Equal(t, []string{
		"Export(3, 30s)", "ForceFlush", // ForceFlush: the queued records, then the exporter's ForceFlush
		"ForceFlush",                               // nothing queued: no export call
		"Export(4, 30s)",                           // a full batch, as soon as it is full
		"Export(2, 30s)", "ForceFlush", "Shutdown", // Shutdown: the rest, the exporter's ForceFlush, its Shutdown
	}, got)

	spanRefs := [2]spanRef{
		{"BatchSpanProcessor", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor {
			return sdktrace.NewBatchSpanProcessor(e, sdktrace.WithMaxExportBatchSize(4))
		}},
		{"otelsink", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor {
			return otelsink.NewSpanProcessor(e, otelsink.WithMaxExportBatchSize(4))
		}},
	}
	gotSpans := bothAgree(t, [2]string{spanRefs[0].name, spanRefs[1].name}, func(t *testing.T, i int) (calls []string) {
		synctest.Test(t, func(t *testing.T) {
			exp := &callLog{}
			p := spanRefs[i].make(exp)
			end := func(n int) {
				for j := range n {
					p.OnEnd(stub(j, true))
				}
				synctest.Wait()
			}
			end(3)
			require.NoError(t, p.ForceFlush(context.Background()))
			end(6)
			require.NoError(t, p.Shutdown(context.Background()))
			calls, _ = exp.result()
		})
		return calls
	})
	require.Equal(t, []string{"Export(3, 30s)", "Export(4, 30s)", "Export(2, 30s)", "Shutdown"}, gotSpans)
}

// envCase is one setting of the environment and options, for both kinds of
// processor: the span processors get the OTEL_BSP_ variable and the span
// options, the log processors the OTEL_BLRP_ ones.
type envCase struct {
	name     string
	env      map[string]string
	otelsink []otelsink.Option
	bsp      []sdktrace.BatchSpanProcessorOption
	blp      []sdklog.BatchProcessorOption
}

// envOutcome is what a processor did with 10 items, its exporter held by
// the first export until 20 more had been offered: the export calls, with
// their sizes and the time left to their deadlines, and how many items were
// exported in all (the rest were dropped by a full queue).
type envOutcome struct {
	Calls    []string
	Exported int
}

func TestTheEnvironmentVariablesAsTheSDKReadsThem(t *testing.T) {
	cases := []envCase{
		{name: "every variable", env: map[string]string{
			"MAX_QUEUE_SIZE": "8", "MAX_EXPORT_BATCH_SIZE": "3", "EXPORT_TIMEOUT": "1500"}},
		{name: "options win over the variables",
			env: map[string]string{"MAX_QUEUE_SIZE": "8", "MAX_EXPORT_BATCH_SIZE": "3", "EXPORT_TIMEOUT": "1500"},
			otelsink: []otelsink.Option{otelsink.WithMaxQueueSize(5), otelsink.WithMaxExportBatchSize(2),
				otelsink.WithExportTimeout(700 * time.Millisecond)},
			bsp: []sdktrace.BatchSpanProcessorOption{sdktrace.WithMaxQueueSize(5), sdktrace.WithMaxExportBatchSize(2),
				sdktrace.WithExportTimeout(700 * time.Millisecond)},
			blp: []sdklog.BatchProcessorOption{sdklog.WithMaxQueueSize(5), sdklog.WithExportMaxBatchSize(2),
				sdklog.WithExportTimeout(700 * time.Millisecond)}},
		{name: "a variable that is not an integer is ignored", env: map[string]string{
			"MAX_QUEUE_SIZE": "8", "MAX_EXPORT_BATCH_SIZE": "3", "EXPORT_TIMEOUT": "1.5s"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Run("spans", func(t *testing.T) {
				for _, key := range []string{"MAX_QUEUE_SIZE", "MAX_EXPORT_BATCH_SIZE", "EXPORT_TIMEOUT"} {
					t.Setenv("OTEL_BSP_"+key, tc.env[key])
				}
				refs := [2]spanRef{
					{"BatchSpanProcessor", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor {
						return sdktrace.NewBatchSpanProcessor(e, tc.bsp...)
					}},
					{"otelsink", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor {
						return otelsink.NewSpanProcessor(e, append([]otelsink.Option{otelsink.WithShards(1), quiet}, tc.otelsink...)...)
					}},
				}
				bothAgree(t, [2]string{refs[0].name, refs[1].name}, func(t *testing.T, i int) envOutcome {
					return heldExporterOutcome(t, func(e *callLog) (offer func(int), shutdown func() error) {
						p := refs[i].make(e)
						return func(j int) { p.OnEnd(stub(j, true)) }, func() error { return p.Shutdown(context.Background()) }
					})
				})
			})
			t.Run("logs", func(t *testing.T) {
				for _, key := range []string{"MAX_QUEUE_SIZE", "MAX_EXPORT_BATCH_SIZE", "EXPORT_TIMEOUT"} {
					t.Setenv("OTEL_BLRP_"+key, tc.env[key])
				}
				refs := [2]logRef{
					{"BatchProcessor", func(e sdklog.Exporter) sdklog.Processor { return sdklog.NewBatchProcessor(e, tc.blp...) }},
					{"otelsink", func(e sdklog.Exporter) sdklog.Processor {
						return otelsink.NewLogProcessor(e, append([]otelsink.Option{otelsink.WithShards(1), quiet}, tc.otelsink...)...)
					}},
				}
				base := record(0)
				bothAgree(t, [2]string{refs[0].name, refs[1].name}, func(t *testing.T, i int) envOutcome {
					return heldExporterOutcome(t, func(e *callLog) (offer func(int), shutdown func() error) {
						p := refs[i].make(e)
						return func(j int) {
								r := base.Clone()
								r.SetBody(attribute.IntValue(j))
								require.NoError(t, p.OnEmit(context.Background(), &r))
							},
							func() error { return p.Shutdown(context.Background()) }
					})
				})
			})
		})
	}
}

// heldExporterOutcome offers items to a processor (made by start) whose
// exporter holds its exports: the first export begins, 20 more items are
// offered while it is held, then the exporter is released and the
// processor shut down.
func heldExporterOutcome(t *testing.T, start func(*callLog) (offer func(int), shutdown func() error)) (o envOutcome) {
	synctest.Test(t, func(t *testing.T) {
		exp := &callLog{held: make(chan struct{}), started: make(chan struct{}, 100)}
		offer, shutdown := start(exp)
		// Enough items for a full batch of any size in the cases, one at a
		// time, until the first export is held.
		for j := 0; len(exp.started) == 0; j++ {
			require.Less(t, j, 100, "no export began")
			offer(j)
			synctest.Wait()
		}
		for j := range 20 {
			offer(100 + j)
		}
		close(exp.held)
		require.NoError(t, shutdown())
		o.Calls, o.Exported = exp.result()
	})
	return o
}
