package otelsink_test

// What the exporter receives: batches of up to WithMaxExportBatchSize
// whatever the shard count, and a short batch once the batch timeout has
// passed, checked in testing/synctest bubbles (fake time, exact durations)
// and, where the SDK defines the behaviour, against the BatchSpanProcessor
// run through the same scenario.

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/shardedsink/shardedsink/otelsink"
)

// batchRecorder is a SpanExporter that records, for each ExportSpans call,
// its size and when it began (fake time in a bubble).
type batchRecorder struct {
	mu    sync.Mutex
	sizes []int
	at    []time.Time
}

func (e *batchRecorder) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sizes = append(e.sizes, len(spans))
	e.at = append(e.at, time.Now())
	return nil
}

func (*batchRecorder) Shutdown(context.Context) error { return nil }

// shutdownAtEnd shuts p down when the test ends, also when it fails first
// (in a bubble, before the bubble waits for its goroutines). A Shutdown
// after a Shutdown does nothing.
func shutdownAtEnd(t *testing.T, p interface{ Shutdown(context.Context) error }) {
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
}

// calls returns the sizes of the export calls so far and when each began.
func (e *batchRecorder) calls() ([]int, []time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.sizes), slices.Clone(e.at)
}

func TestExportBatchesHoldUpToTheBatchSizeWhateverTheShardCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		exp := &batchRecorder{}
		// 32 shards of 64 spans: a shard holds an eighth of a batch.
		p := otelsink.NewSpanProcessor(exp, otelsink.WithShards(32), otelsink.WithMaxQueueSize(2048),
			otelsink.WithMaxExportBatchSize(512), otelsink.WithBatchTimeout(time.Hour))
		shutdownAtEnd(t, p)
		span := stub(0, true)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 128 {
					p.OnEnd(span)
					time.Sleep(time.Millisecond) // the drain workers take each span before the next
				}
			})
		}
		wg.Wait()
		synctest.Wait()
		sizes, _ := exp.calls()
		require.Equal(t, []int{512, 512}, sizes, "1,024 spans in two full batches, none held back by a shard's size")
		require.NoError(t, p.Shutdown(context.Background()))
		st := p.Stats()
		require.Equal(t, uint64(1024), st.Exported)
		require.Zero(t, st.Dropped)
	})
}

// batchTimeoutCase is one way of setting the span processors' batch
// timeout: an option, the environment variable, or neither.
type batchTimeoutCase struct {
	name     string
	env      string // OTEL_BSP_SCHEDULE_DELAY; "" to leave it unset
	want     time.Duration
	otelsink []otelsink.Option
	bsp      []sdktrace.BatchSpanProcessorOption
}

func batchTimeoutCases() []batchTimeoutCase {
	return []batchTimeoutCase{
		{name: "WithBatchTimeout", want: 300 * time.Millisecond,
			otelsink: []otelsink.Option{otelsink.WithBatchTimeout(300 * time.Millisecond)},
			bsp:      []sdktrace.BatchSpanProcessorOption{sdktrace.WithBatchTimeout(300 * time.Millisecond)}},
		{name: "OTEL_BSP_SCHEDULE_DELAY", env: "700", want: 700 * time.Millisecond},
		{name: "the option wins over the variable", env: "700", want: 300 * time.Millisecond,
			otelsink: []otelsink.Option{otelsink.WithBatchTimeout(300 * time.Millisecond)},
			bsp:      []sdktrace.BatchSpanProcessorOption{sdktrace.WithBatchTimeout(300 * time.Millisecond)}},
		{name: "the default", want: otelsink.DefaultBatchTimeout},
	}
}

// TestTheBatchTimeoutExportsAShortBatchAfterTheTimeout ends one span and
// looks at when it is exported: not before the batch timeout, and at it,
// as the BatchSpanProcessor does (run through the same scenario alongside).
// A processor that exported at once, or never without a flush, fails.
func TestTheBatchTimeoutExportsAShortBatchAfterTheTimeout(t *testing.T) {
	for _, tc := range batchTimeoutCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(otelsink.EnvBSPScheduleDelay, tc.env)
			for _, im := range []struct {
				name string
				make func(sdktrace.SpanExporter) sdktrace.SpanProcessor
			}{
				{"otelsink", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor {
					return otelsink.NewSpanProcessor(e, append([]otelsink.Option{otelsink.WithShards(4)}, tc.otelsink...)...)
				}},
				{"bsp", func(e sdktrace.SpanExporter) sdktrace.SpanProcessor {
					return sdktrace.NewBatchSpanProcessor(e, tc.bsp...)
				}},
			} {
				t.Run(im.name, func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						exp := &batchRecorder{}
						p := im.make(exp)
						shutdownAtEnd(t, p)
						start := time.Now()
						p.OnEnd(stub(0, true))
						time.Sleep(tc.want - time.Millisecond)
						synctest.Wait()
						sizes, _ := exp.calls()
						require.Empty(t, sizes, "nothing is exported before the batch timeout")
						time.Sleep(time.Millisecond)
						synctest.Wait()
						sizes, at := exp.calls()
						require.Equal(t, []int{1}, sizes, "the short batch is exported at the batch timeout")
						require.Equal(t, tc.want, at[0].Sub(start))
						require.NoError(t, p.Shutdown(context.Background()))
					})
				})
			}
		})
	}
}

func TestAZeroBatchTimeoutExportsAtOnce(t *testing.T) {
	for _, env := range []string{"", "0"} {
		t.Run("OTEL_BSP_SCHEDULE_DELAY="+strconv.Quote(env), func(t *testing.T) {
			t.Setenv(otelsink.EnvBSPScheduleDelay, env)
			synctest.Test(t, func(t *testing.T) {
				exp := &batchRecorder{}
				opts := []otelsink.Option{otelsink.WithShards(4)}
				if env == "" {
					opts = append(opts, otelsink.WithBatchTimeout(0))
				}
				p := otelsink.NewSpanProcessor(exp, opts...)
				shutdownAtEnd(t, p)
				start := time.Now()
				p.OnEnd(stub(0, true))
				synctest.Wait()
				sizes, at := exp.calls()
				require.Equal(t, []int{1}, sizes)
				require.Equal(t, start, at[0], "exported without waiting")
				require.NoError(t, p.Shutdown(context.Background()))
			})
		})
	}
}
