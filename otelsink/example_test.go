package otelsink_test

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
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

// stdoutExporter prints the body of each record it exports.
type stdoutExporter struct{}

func (stdoutExporter) Export(_ context.Context, records []sdklog.Record) error {
	for _, r := range records {
		fmt.Println("exported:", r.Body().AsString())
	}
	return nil
}
func (stdoutExporter) ForceFlush(context.Context) error { return nil }
func (stdoutExporter) Shutdown(context.Context) error   { return nil }

// The log processor goes where sdklog.NewBatchProcessor would.
func ExampleNewLogProcessor() {
	processor := otelsink.NewLogProcessor(stdoutExporter{}, otelsink.WithShards(1))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(processor))

	var r log.Record
	r.SetBody(attribute.StringValue("hello"))
	lp.Logger("example").Emit(context.Background(), r) // OnEmit: a copy pushed into a ring

	_ = lp.Shutdown(context.Background()) // drains, flushes and shuts the exporter down
	fmt.Println("after Shutdown: exported", processor.Stats().Exported)
	// Output:
	// exported: hello
	// after Shutdown: exported 1
}
