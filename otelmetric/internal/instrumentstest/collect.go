package instrumentstest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// NewReader returns a MeterProvider on a ManualReader, shut down when the
// test ends.
func NewReader(t testing.TB) (*sdkmetric.MeterProvider, *sdkmetric.ManualReader) {
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return mp, r
}

// Point is one data point of a collection.
type Point struct {
	Value     int64
	Monotonic bool // a Sum that is monotonic: a counter
	Unit      string
}

// Collect returns the data points of one collection, keyed
// name{k=v,...} with the attributes in the set's order (sorted by key).
// A nil t (an example) panics on an error.
func Collect(t testing.TB, r *sdkmetric.ManualReader) map[string]Point {
	out, err := CollectErr(r)
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

// CollectErr is Collect for any goroutine: it returns the error.
func CollectErr(r *sdkmetric.ManualReader) (map[string]Point, error) {
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		return nil, err
	}
	out := map[string]Point{}
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
				out[key(m.Name, dp.Attributes)] = Point{dp.Value, sum.IsMonotonic, m.Unit}
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

// Values returns the points' values only, for comparing with a want map.
func Values(ps map[string]Point) map[string]int64 {
	out := map[string]int64{}
	for k, p := range ps {
		out[k] = p.Value
	}
	return out
}

// SortedKeys returns m's keys, sorted: for messages.
func SortedKeys(m map[string]Point) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// n is the attribute of the sink "orders".
const n = "shardedsink.sink.name=orders"

// RingTotals are the values of sinktest.TwoShards("orders")'s instruments
// in total.
var RingTotals = map[string]int64{
	"shardedsink.shards{" + n + "}":                                2,
	"shardedsink.queue.size{" + n + "}":                            8,
	"shardedsink.queue.capacity{" + n + "}":                        128,
	"shardedsink.queue.bytes{" + n + "}":                           800,
	"shardedsink.processed{" + n + "}":                             300,
	"shardedsink.processed{error.type=queue_full," + n + "}":       1,
	"shardedsink.processed{error.type=disk," + n + "}":             3,
	"shardedsink.spill.spilled{" + n + "}":                         100,
	"shardedsink.spill.queue.size{" + n + "}":                      5,
	"shardedsink.spill.bytes{" + n + "}":                           4096,
	"shardedsink.spill.drained{" + n + "}":                         90,
	"shardedsink.spill.recovered{" + n + "}":                       7,
	"shardedsink.spill.lost{" + n + "}":                            1,
	"shardedsink.spill.errors{" + n + "}":                          1,
	"shardedsink.spill.corrupt{" + n + "}":                         2,
	"shardedsink.processed{error.type=queue_bytes_full," + n + "}": 11,
	"shardedsink.processed{error.type=waited_out," + n + "}":       5,
	"shardedsink.processed{error.type=shutdown," + n + "}":         5,
	"shardedsink.processed{error.type=displaced," + n + "}":        8,
	"shardedsink.handoffs{" + n + "}":                              11,
	"shardedsink.drain.max_time{" + n + "}":                        3000,
	"shardedsink.drain.max_worker_delay{" + n + "}":                7000,
	"shardedsink.overloads{" + n + "}":                             6,
	"shardedsink.queue.waiting{" + n + "}":                         5,
	"shardedsink.drain.panics{" + n + "}":                          3,
}

// Watch collects r over and over on a goroutine of its own, checking that
// no counter (a monotonic Sum) goes down from one collection to the next,
// and counting the collections in collections, until the returned stop is
// called; stop waits for the goroutine.
func Watch(t *testing.T, r *sdkmetric.ManualReader, collections *atomic.Int64) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		prev := map[string]Point{}
		for {
			select {
			case <-quit:
				return
			default:
			}
			cur, err := CollectErr(r)
			if !assert.NoError(t, err) {
				return
			}
			for k, p := range cur {
				if p.Monotonic {
					assert.GreaterOrEqual(t, p.Value, prev[k].Value, "counter %s went down", k)
				}
			}
			prev = cur
			collections.Add(1)
		}
	}()
	return func() { close(quit); <-done }
}
