package otelsink_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/shardedsink/shardedsink/otelsink"
)

// The processor goes where sdktrace.NewBatchSpanProcessor would: here with
// the SDK's in-memory exporter; in a service, with an OTLP exporter.
func Example() {
	exporter := tracetest.NewInMemoryExporter()
	processor := otelsink.NewSpanProcessor(exporter,
		otelsink.WithMaxQueueSize(8192),      // in all, over the shards
		otelsink.WithMaxExportBatchSize(512)) // spans per ExportSpans call
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(processor))
	tracer := tp.Tracer("example")

	for i := range 3 {
		_, span := tracer.Start(context.Background(), fmt.Sprint("request-", i))
		span.End() // OnEnd: one push into a ring, never waits
	}

	_ = tp.ForceFlush(context.Background()) // the three are exported by its return
	fmt.Println("exported:", len(exporter.GetSpans()))

	_ = tp.Shutdown(context.Background()) // drains, stops the workers, shuts the exporter down
	st := processor.Stats()
	fmt.Println("after Shutdown: exported", st.Exported, "dropped", st.Dropped)
	// Output:
	// exported: 3
	// after Shutdown: exported 3 dropped 0
}
