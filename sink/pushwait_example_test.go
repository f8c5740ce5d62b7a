package sink_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shardedsink/shardedsink/sink"
)

// Telemetry takes Push, which sheds at once when its ring is full; an
// audit event worth a short wait takes PushWait with a deadline, and is
// counted apart (Stats().WaitedOut) when the deadline passes first.
func ExampleSink_PushWait() {
	s := sink.MustNew(sink.Config[Event]{Name: "audit", Shards: 1, RingCapacity: 64},
		sink.ActionFunc[Event](func(ctx context.Context, batch []Event) {
			// Write batch to the audit log.
		}))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := s.PushWait(ctx, Event{Route: "/admin/delete", Status: 200})
	switch {
	case err == nil:
		fmt.Println("queued")
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Println("no room within 50 ms: dropped and counted in WaitedOut")
	case errors.Is(err, sink.ErrShutdown):
		fmt.Println("the sink is shutting down")
	}
	_ = s.Shutdown(context.Background())
	st := s.Stats()
	fmt.Println("drained", st.Drained, "waited out", st.WaitedOut)
	// Output:
	// queued
	// drained 1 waited out 0
}
