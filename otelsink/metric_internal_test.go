package otelsink

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// processed collects reader and returns the data points of the processed
// counter of the named processor, keyed by error.type ("" when absent).
func processed(t *testing.T, reader *sdkmetric.ManualReader, component string) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != spanMetrics.processed.name {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				if name, _ := dp.Attributes.Value("otel.component.name"); name.AsString() != component {
					continue
				}
				et, _ := dp.Attributes.Value("error.type")
				out[et.AsString()] = dp.Value
			}
		}
	}
	return out
}

// TestPushesThatMeetARingShutdownClosedCountAsShutdown: an OnEnd that
// loaded the closed flag just before Shutdown stored it reaches a ring that
// Shutdown has closed, and the sink counts the refusal as a drop. That span
// was lost to Shutdown, not to a full queue.
func TestPushesThatMeetARingShutdownClosedCountAsShutdown(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { require.NoError(t, mp.Shutdown(context.Background())) }()
	p := NewSpanProcessor(tracetest.NewNoopExporter(), WithName("closed-ring"), WithMeterProvider(mp), WithShards(1))
	span := tracetest.SpanStub{}.Snapshot()
	p.OnEnd(span) // unsampled: ignored
	require.NoError(t, p.Shutdown(context.Background()))
	// The OnEnd that passed the closed check before Shutdown began, and
	// pushes now.
	require.False(t, p.c.sink.Push(span), "the ring is closed")
	require.Equal(t, map[string]int64{"": 0, "queue_full": 0, "export_failed": 0, "shutdown": 1},
		processed(t, reader, "closed-ring"))
	require.Equal(t, uint64(1), p.Stats().Dropped)
}
