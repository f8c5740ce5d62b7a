package natsmetric_test

import (
	"context"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/natssink/embedded"
	"github.com/shardedsink/shardedsink/otelmetric/natsmetric"
	"github.com/shardedsink/shardedsink/sink"
)

// A natssink sink's instruments, on a stream of an embedded server.
func ExampleObserve() {
	srv, err := embedded.Start("")
	if err != nil {
		panic(err)
	}
	defer srv.Stop()
	ctx := context.Background()
	if _, err := srv.JetStream.CreateStream(ctx, jetstream.StreamConfig{
		Name: "ORDERS", Subjects: []string{"orders.>"}, Storage: jetstream.MemoryStorage,
	}); err != nil {
		panic(err)
	}
	s, err := natssink.New(srv.JetStream, natssink.Config[int]{Subject: "orders.placed",
		Encode: func(dst []byte, id int) ([]byte, error) { return strconv.AppendInt(dst, int64(id), 10), nil },
		Sink:   sink.Config[int]{Name: "orders"},
	})
	if err != nil {
		panic(err)
	}
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(ctx)
	if _, err := natsmetric.Observe(mp, s); err != nil {
		panic(err)
	}

	for id := range 3 {
		s.Push(id)
	}
	if err := s.Shutdown(ctx); err != nil { // publishes, waits for the acks
		panic(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		panic(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch m.Name {
		case "shardedsink.nats.pushed", "shardedsink.nats.inflight":
			fmt.Println(m.Name, m.Data.(metricdata.Sum[int64]).DataPoints[0].Value)
		case "shardedsink.nats.exported":
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				if _, failed := dp.Attributes.Value("error.type"); !failed {
					fmt.Println(m.Name, dp.Value)
				}
			}
		}
	}
	// Output:
	// shardedsink.nats.pushed 3
	// shardedsink.nats.inflight 0
	// shardedsink.nats.exported 3
}
