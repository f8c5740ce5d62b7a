package natssink_test

import (
	"context"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/natssink/embedded"
)

// A sink into a stream of an embedded server. With a cluster, js would
// come from natssink.Connect(url); nothing else changes.
func Example() {
	srv, err := embedded.Start("") // JetStream in a temporary folder, on 127.0.0.1
	if err != nil {
		panic(err)
	}
	defer srv.Stop()
	ctx := context.Background()
	js := srv.JetStream
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "ORDERS", Subjects: []string{"orders.>"}, Storage: jetstream.MemoryStorage,
	})
	if err != nil {
		panic(err)
	}

	type order struct {
		ID    int
		Cents int64
	}
	s, err := natssink.New(js, natssink.Config[order]{
		Subject: "orders.placed",
		Encode: func(dst []byte, o order) ([]byte, error) {
			dst = strconv.AppendInt(append(dst, `{"id":`...), int64(o.ID), 10)
			return append(strconv.AppendInt(append(dst, `,"cents":`...), o.Cents, 10), '}'), nil
		},
	})
	if err != nil {
		panic(err)
	}
	for i := range 3 {
		s.Push(order{ID: i, Cents: 1999}) // never waits
	}
	if err := s.Shutdown(ctx); err != nil { // publishes, waits for the acks
		panic(err)
	}
	st := s.Stats()
	fmt.Println("pushed", st.Pushed, "acked", st.Acked, "failed", st.Failed, "dropped", st.Dropped)

	info, err := stream.Info(ctx)
	if err != nil {
		panic(err)
	}
	m, err := stream.GetMsg(ctx, info.State.FirstSeq)
	if err != nil {
		panic(err)
	}
	fmt.Println("the stream holds", info.State.Msgs, "messages, one per value, such as", m.Subject, len(m.Data), "bytes")
	// Output:
	// pushed 3 acked 3 failed 0 dropped 0
	// the stream holds 3 messages, one per value, such as orders.placed 21 bytes
}
