package otelmetric_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/shardedsink/shardedsink/otelmetric"
	"github.com/shardedsink/shardedsink/otelmetric/internal/instrumentstest"
	"github.com/shardedsink/shardedsink/sink"
)

// BenchmarkReaderCollect is a collection of a sink of 64 shards through the
// SDK's ManualReader: the callback (its Stats call included) and the SDK's
// aggregation of the observations.
func BenchmarkReaderCollect(b *testing.B) {
	for _, per := range []bool{false, true} {
		b.Run(fmt.Sprintf("shards=64/per-shard=%t", per), func(b *testing.B) {
			s := sink.MustNew(sink.Config[int]{Name: "bench", Shards: 64, RingCapacity: 1024,
				Logger: slog.New(slog.DiscardHandler)}, sink.ActionFunc[int](func(context.Context, []int) {}))
			b.Cleanup(func() { _ = s.Shutdown(context.Background()) })
			mp, r := instrumentstest.NewReader(b)
			var opts []otelmetric.Option
			if per {
				opts = append(opts, otelmetric.WithPerShard())
			}
			if _, err := otelmetric.ObserveSink(mp, s, opts...); err != nil {
				b.Fatal(err)
			}
			var rm metricdata.ResourceMetrics
			b.ReportAllocs()
			for b.Loop() {
				if err := r.Collect(context.Background(), &rm); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
