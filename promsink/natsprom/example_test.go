package natsprom_test

import (
	"context"
	"os"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/natssink/embedded"
	"github.com/shardedsink/shardedsink/promsink/natsprom"
	"github.com/shardedsink/shardedsink/sink"
)

// A natssink sink's collector, on a stream of an embedded server.
func ExampleNewCollector() {
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
	reg := prometheus.NewRegistry()
	reg.MustRegister(natsprom.NewCollector(s))

	for id := range 3 {
		s.Push(id)
	}
	if err := s.Shutdown(ctx); err != nil { // publishes, waits for the acks
		panic(err)
	}
	text, _ := testutil.GatherAndFormat(reg, expfmt.TypeTextPlain,
		"shardedsink_nats_pushed_values_total", "shardedsink_nats_acked_values_total", "shardedsink_nats_in_flight_values")
	os.Stdout.Write(text)
	// Output:
	// # HELP shardedsink_nats_acked_values_total Values the stream acknowledged.
	// # TYPE shardedsink_nats_acked_values_total counter
	// shardedsink_nats_acked_values_total{sink="orders"} 3
	// # HELP shardedsink_nats_in_flight_values Values published and awaiting their ack or a retry; at most MaxInFlight.
	// # TYPE shardedsink_nats_in_flight_values gauge
	// shardedsink_nats_in_flight_values{sink="orders"} 0
	// # HELP shardedsink_nats_pushed_values_total Calls of Push: dropped, queued, in flight, acked or failed.
	// # TYPE shardedsink_nats_pushed_values_total counter
	// shardedsink_nats_pushed_values_total{sink="orders"} 3
}
