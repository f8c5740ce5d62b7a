package otelsink_test

import (
	"context"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/shardedsink/shardedsink/otelsink"
)

// points collects the reader and returns, for each instrument of the
// processor's scope, its data points keyed by their error.type attribute
// ("" when absent), and the instrument's unit.
func points(t *testing.T, r *sdkmetric.ManualReader, component string) map[string]map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	out := map[string]map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != otelsink.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			require.True(t, ok, "%s collects as a Sum[int64], got %T", m.Name, m.Data)
			byType := map[string]int64{}
			for _, dp := range sum.DataPoints {
				name, _ := dp.Attributes.Value("otel.component.name")
				if name.AsString() != component {
					continue
				}
				et, _ := dp.Attributes.Value("error.type")
				byType[et.AsString()] = dp.Value
			}
			if len(byType) > 0 {
				out[m.Name+" "+m.Unit] = byType
			}
		}
	}
	return out
}

func TestTheMeterProviderSeesTheSemanticConventionMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { require.NoError(t, mp.Shutdown(context.Background())) }()

	exp := newTestExporter()
	started, release := make(chan struct{}, 1), make(chan struct{})
	exp.hook = func(ctx context.Context, _ []sdktrace.ReadOnlySpan) error {
		select {
		case started <- struct{}{}:
		default:
		}
		<-release
		return nil
	}
	p := otelsink.NewSpanProcessor(exp, otelsink.WithName("api"), otelsink.WithMeterProvider(mp),
		otelsink.WithShards(1), otelsink.WithMaxQueueSize(4), otelsink.WithMaxExportBatchSize(1), quiet)

	require.Equal(t, map[string]map[string]int64{
		"otel.sdk.processor.span.processed {span}":      {"": 0, "queue_full": 0, "export_failed": 0, "shutdown": 0},
		"otel.sdk.processor.span.queue.size {span}":     {"": 0},
		"otel.sdk.processor.span.queue.capacity {span}": {"": 4},
	}, points(t, reader, "api"))

	p.OnEnd(stub(0, true))
	<-started
	for i := range 10 {
		p.OnEnd(stub(1+i, true))
	}
	require.Equal(t, map[string]map[string]int64{
		"otel.sdk.processor.span.processed {span}":      {"": 0, "queue_full": 6, "export_failed": 0, "shutdown": 0},
		"otel.sdk.processor.span.queue.size {span}":     {"": 4},
		"otel.sdk.processor.span.queue.capacity {span}": {"": 4},
	}, points(t, reader, "api"))

	close(release)
	require.NoError(t, p.ForceFlush(context.Background()))
	require.Equal(t, map[string]int64{"": 5, "queue_full": 6, "export_failed": 0, "shutdown": 0},
		points(t, reader, "api")["otel.sdk.processor.span.processed {span}"])
	require.NoError(t, p.Shutdown(context.Background()))
	require.Equal(t, map[string]map[string]int64{
		"otel.sdk.processor.span.processed {span}": {"": 5, "queue_full": 6, "export_failed": 0, "shutdown": 0},
	}, points(t, reader, "api"), "after Shutdown the processed counts stay, the queue's size and capacity go (as the SDK's)")
}

// TestTheProcessedCountsOutliveShutdown: what Shutdown's drain exported,
// and what it counted as error.type=shutdown, is there for a collection
// after Shutdown, such as the MeterProvider's last one at its own Shutdown,
// which comes after the TracerProvider's; as with the SDK's processors,
// whose processed counters keep their sums. The MeterProvider does not keep
// the processor: once nothing else holds it, it is freed and its final
// counts are still reported.
func TestTheProcessedCountsOutliveShutdown(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { require.NoError(t, mp.Shutdown(context.Background())) }()
	const component = "outlives"
	gone := func() weak.Pointer[otelsink.SpanProcessor] {
		p := otelsink.NewSpanProcessor(newTestExporter(), otelsink.WithName(component), otelsink.WithMeterProvider(mp),
			otelsink.WithShards(2), otelsink.WithBatchTimeout(time.Hour))
		for i := range 7 {
			p.OnEnd(stub(i, true))
		}
		require.NoError(t, p.Shutdown(context.Background()))
		p.OnEnd(stub(7, true)) // after Shutdown: error.type=shutdown
		require.Equal(t, map[string]int64{"": 7, "queue_full": 0, "export_failed": 0, "shutdown": 1},
			points(t, reader, component)["otel.sdk.processor.span.processed {span}"],
			"the spans Shutdown's drain exported, and the one ended after it")
		return weak.Make(p)
	}()
	for range 10 {
		if gone.Value() == nil {
			break
		}
		runtime.GC()
	}
	require.Nil(t, gone.Value(), "the MeterProvider does not keep a processor that was shut down")
	require.Equal(t, map[string]map[string]int64{
		"otel.sdk.processor.span.processed {span}": {"": 7, "queue_full": 0, "export_failed": 0, "shutdown": 1},
	}, points(t, reader, component), "its final counts are still reported")
}

func TestTheGlobalMeterProviderIsUsedWhenTheSDKsSwitchIsOn(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { require.NoError(t, mp.Shutdown(context.Background())) }()
	prev := otel.GetMeterProvider()
	otel.SetMeterProvider(mp)
	defer otel.SetMeterProvider(prev)

	p := otelsink.NewSpanProcessor(newTestExporter(), otelsink.WithName("off"))
	require.Empty(t, points(t, reader, "off"), "no metrics while the switch is off")
	require.NoError(t, p.Shutdown(context.Background()))

	t.Setenv("OTEL_GO_X_OBSERVABILITY", "True")
	p = otelsink.NewSpanProcessor(newTestExporter(), otelsink.WithName("on"), otelsink.WithShards(2), otelsink.WithMaxQueueSize(8))
	p.OnEnd(stub(0, true))
	require.NoError(t, p.ForceFlush(context.Background()))
	got := points(t, reader, "on")
	require.Equal(t, int64(1), got["otel.sdk.processor.span.processed {span}"][""])
	require.Equal(t, int64(8), got["otel.sdk.processor.span.queue.capacity {span}"][""])
	require.NoError(t, p.Shutdown(context.Background()))
}
