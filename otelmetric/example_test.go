package otelmetric_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/shardedsink/shardedsink/otelmetric"
	"github.com/shardedsink/shardedsink/otelmetric/internal/instrumentstest"
	"github.com/shardedsink/shardedsink/sink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// A sink's instruments on an SDK MeterProvider; in a service, the
// provider's reader is an OTLP or a Prometheus exporter.
func ExampleObserveSink() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	s := sink.MustNew(sink.Config[string]{Name: "events", Shards: 2},
		sink.ActionFunc[string](func(context.Context, []string) {}))
	reg, err := otelmetric.ObserveSink(mp, s)
	if err != nil {
		panic(err)
	}
	defer reg.Unregister()

	for _, ev := range []string{"a", "b", "c"} {
		s.Push(ev)
	}
	_ = s.Shutdown(context.Background())
	s.Push("late") // after Shutdown: error.type=shutdown

	got := instrumentstest.Collect(nil, reader)
	fmt.Println("processed:", got["shardedsink.processed{shardedsink.sink.name=events}"].Value)
	fmt.Println("shutdown:", got["shardedsink.processed{error.type=shutdown,shardedsink.sink.name=events}"].Value)
	fmt.Println("capacity:", got["shardedsink.queue.capacity{shardedsink.sink.name=events}"].Value)
	// Output:
	// processed: 3
	// shutdown: 1
	// capacity: 16384
}

// A slogsink handler's instruments: the handler has no name, so it is
// given one.
func ExampleObserveHandler() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	var out bytes.Buffer
	h, err := slogsink.New(&out, nil)
	if err != nil {
		panic(err)
	}
	if _, err := otelmetric.ObserveHandler(mp, h, "app"); err != nil {
		panic(err)
	}
	log := slog.New(h)
	log.Info("started")
	log.Warn("disk almost full")
	_ = h.Close(context.Background())
	log.Error("after Close") // shed: error.type=queue_full, level error

	got := instrumentstest.Collect(nil, reader)
	fmt.Println("written:", got["shardedsink.slog.processed{shardedsink.sink.name=app}"].Value)
	fmt.Println("shed at error:", got["shardedsink.slog.processed{error.type=queue_full,shardedsink.log.level=error,shardedsink.sink.name=app}"].Value)
	// Output:
	// written: 2
	// shed at error: 1
}
