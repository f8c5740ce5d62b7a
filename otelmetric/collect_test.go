package otelmetric_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// newReader returns a MeterProvider on a ManualReader, shut down when the
// test ends.
func newReader(t testing.TB) (*sdkmetric.MeterProvider, *sdkmetric.ManualReader) {
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return mp, r
}

// point is one data point of a collection.
type point struct {
	value     int64
	monotonic bool // a Sum that is monotonic: a counter
	unit      string
}

// collect returns the data points of one collection, keyed
// name{k=v,...} with the attributes in the set's order (sorted by key).
// A nil t (an example) panics on an error.
func collect(t testing.TB, r *sdkmetric.ManualReader) map[string]point {
	out, err := collectErr(r)
	if t == nil {
		if err != nil {
			panic(err)
		}
		return out
	}
	t.Helper()
	require.NoError(t, err)
	return out
}

func collectErr(r *sdkmetric.ManualReader) (map[string]point, error) {
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		return nil, err
	}
	out := map[string]point{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				return nil, fmt.Errorf("%s: data %T, want a Sum[int64]", m.Name, m.Data)
			}
			if sum.Temporality != metricdata.CumulativeTemporality {
				return nil, fmt.Errorf("%s: temporality %v", m.Name, sum.Temporality)
			}
			for _, dp := range sum.DataPoints {
				out[key(m.Name, dp.Attributes)] = point{dp.Value, sum.IsMonotonic, m.Unit}
			}
		}
	}
	return out, nil
}

func key(name string, set attribute.Set) string {
	var kvs []string
	for _, kv := range set.ToSlice() {
		kvs = append(kvs, string(kv.Key)+"="+kv.Value.String())
	}
	return name + "{" + strings.Join(kvs, ",") + "}"
}

// values returns the points' values only, for comparing with a want map.
func values(ps map[string]point) map[string]int64 {
	out := map[string]int64{}
	for k, p := range ps {
		out[k] = p.value
	}
	return out
}

// sortedKeys is for messages.
func sortedKeys(m map[string]point) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
