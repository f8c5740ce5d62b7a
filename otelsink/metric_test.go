package otelsink_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/shardedsink/shardedsink/otelsink"
)

// droppedPoints collects the reader and returns the data points of the
// dropped-spans counter.
func droppedPoints(t *testing.T, r *sdkmetric.ManualReader) []metricdata.DataPoint[int64] {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != otelsink.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			if m.Name == otelsink.DroppedMetric {
				require.Equal(t, "{span}", m.Unit)
				sum, ok := m.Data.(metricdata.Sum[int64])
				require.True(t, ok, "an Int64ObservableCounter collects as a Sum[int64], got %T", m.Data)
				require.True(t, sum.IsMonotonic)
				return sum.DataPoints
			}
		}
	}
	return nil
}

func TestTheMeterProviderSeesTheDroppedSpans(t *testing.T) {
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

	points := droppedPoints(t, reader)
	require.Len(t, points, 1)
	require.Zero(t, points[0].Value)

	p.OnEnd(stub(0, true))
	<-started
	for i := range 10 {
		p.OnEnd(stub(1+i, true))
	}
	points = droppedPoints(t, reader)
	require.Len(t, points, 1)
	require.Equal(t, int64(6), points[0].Value)
	name, ok := points[0].Attributes.Value(attribute.Key("otel.component.name"))
	require.True(t, ok)
	require.Equal(t, "api", name.AsString())

	close(release)
	require.NoError(t, p.Shutdown(context.Background()))
	require.Empty(t, droppedPoints(t, reader), "Shutdown unregisters the callback")
}
