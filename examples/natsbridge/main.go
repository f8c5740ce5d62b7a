// Command natsbridge feeds a NATS JetStream stream from a sink: producers
// push events without waiting, and natssink's drain workers publish each
// event as one message with a Nats-Msg-Id of its own, counting what the
// stream acked, what failed and what the full rings shed.
//
// By default it starts a nats-server in the process (natssink/embedded:
// JetStream on a temporary store, listening on 127.0.0.1 on a random
// port), so that it runs on a fresh machine; -url points it at a server
// or a cluster, and nothing else changes. It fails unless the stream
// received exactly the events acked and acked + failed + dropped ==
// pushed.
//
//	go run .                                   # embedded server
//	go run . -url nats://127.0.0.1:4222,nats://127.0.0.1:4223 -producers 64 -events 100000
//	go run . -max-delay 10ms                   # publish in fuller rounds from a slow stream
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/natssink/embedded"
	"github.com/shardedsink/shardedsink/sink"
)

// Event is what the producers push: who made it, its sequence number
// within its producer, and when.
type Event struct {
	Producer int
	Seq      int
	At       int64 // Unix nanoseconds
}

// AppendJSON appends e as {"p":..,"s":..,"t":..}: natssink's Encode.
func (e Event) AppendJSON(dst []byte) []byte {
	dst = strconv.AppendInt(append(dst, `{"p":`...), int64(e.Producer), 10)
	dst = strconv.AppendInt(append(dst, `,"s":`...), int64(e.Seq), 10)
	dst = strconv.AppendInt(append(dst, `,"t":`...), e.At, 10)
	return append(dst, '}')
}

// options is what the flags set.
type options struct {
	url        string
	subject    string
	stream     string
	producers  int
	events     int
	shards     int
	ackTimeout time.Duration
	maxDelay   time.Duration
}

// result is what a run reports.
type result struct {
	Server   string         `json:"server"`
	Pushed   int            `json:"pushed"`
	Accepted int            `json:"accepted"` // Push returned true
	Sink     natssink.Stats `json:"sink"`
	// Stored is the messages the stream gained (after minus before, as
	// signed numbers: limits and other writers may make it anything),
	// and Owned whether this run created the stream, so that Stored must
	// equal the acked events.
	Stored  int64  `json:"stored"`
	Owned   bool   `json:"owned"`
	Elapsed string `json:"elapsed"`
}

func main() {
	var o options
	flag.StringVar(&o.url, "url", "", "NATS server or cluster URL(s), comma-separated; empty starts an embedded server on 127.0.0.1")
	flag.StringVar(&o.subject, "subject", "shardedsink.events", "subject the events are published to")
	flag.StringVar(&o.stream, "stream", "SHARDEDSINK_EVENTS", "JetStream stream that stores the subject (created if missing, never changed if it exists)")
	flag.IntVar(&o.producers, "producers", 16, "goroutines pushing events")
	flag.IntVar(&o.events, "events", 5000, "events each producer pushes")
	flag.IntVar(&o.shards, "shards", 0, "sink shards (0: the sink's default)")
	flag.DurationVar(&o.ackTimeout, "ack-timeout", 5*time.Second, "how long one publish waits for its ack before it is retried")
	flag.DurationVar(&o.maxDelay, "max-delay", 0, "most time a worker holds a short batch for more events (the sink's MaxDelay; 0: at once)")
	flag.Parse()

	res, err := run(context.Background(), o)
	out, _ := json.MarshalIndent(res, "", "  ")
	fmt.Println(string(out))
	if err != nil {
		fmt.Fprintln(os.Stderr, "natsbridge:", err)
		os.Exit(1)
	}
}

// run starts the server (unless o.url is set), pushes the events, shuts
// the sink down, and checks the stream against the sink's counts.
func run(ctx context.Context, o options) (res result, err error) {
	start := time.Now()
	url := o.url
	if url == "" {
		srv, err := embedded.Start("") // a temporary store, removed by Stop
		if err != nil {
			return res, err
		}
		defer srv.Stop()
		url = srv.URL
	}
	res.Server = url

	nc, js, err := natssink.Connect(url)
	if err != nil {
		return res, err
	}
	defer nc.Close()
	// An existing stream (a shared server's) is used as it is, never
	// updated: its subjects and storage are its owner's.
	stream, err := js.Stream(ctx, o.stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		stream, err = js.CreateStream(ctx, jetstream.StreamConfig{
			Name: o.stream, Subjects: []string{o.subject}, Storage: jetstream.FileStorage,
		})
		res.Owned = err == nil
	}
	if err != nil {
		return res, fmt.Errorf("stream %s: %w", o.stream, err)
	}
	before, err := stream.Info(ctx)
	if err != nil {
		return res, err
	}

	s, err := natssink.New(js, natssink.Config[Event]{
		Subject:    o.subject,
		Encode:     func(dst []byte, e Event) ([]byte, error) { return e.AppendJSON(dst), nil },
		AckTimeout: o.ackTimeout,
		Sink: sink.Config[Event]{
			Name: "natsbridge", Shards: o.shards, MaxDelay: o.maxDelay,
			// The producers push flat out and overrun the rings on
			// purpose; the result reports the drops, so the monitor
			// stays quiet.
			OnOverload: func(sink.Overload) {},
		},
	})
	if err != nil {
		return res, err
	}
	res.Pushed = o.producers * o.events
	res.Accepted = push(s, o.producers, o.events)
	shutCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := s.Shutdown(shutCtx); err != nil {
		return res, fmt.Errorf("sink shutdown: %w", err)
	}
	res.Sink = s.Stats()
	after, err := stream.Info(ctx)
	if err != nil {
		return res, err
	}
	res.Stored = int64(after.State.Msgs) - int64(before.State.Msgs)
	res.Elapsed = time.Since(start).Round(time.Millisecond).String()

	st := res.Sink
	if st.Pushed != uint64(res.Pushed) || st.Acked+st.Failed+st.Dropped != st.Pushed {
		return res, fmt.Errorf("acked %d + failed %d + dropped %d != pushed %d (counted %d)", st.Acked, st.Failed, st.Dropped, res.Pushed, st.Pushed)
	}
	if res.Owned && res.Stored != int64(st.Acked) {
		return res, fmt.Errorf("the stream gained %d messages, %d were acked", res.Stored, st.Acked)
	}
	return res, nil
}

// push runs producers goroutines that each push events events, and
// returns how many the sink accepted.
func push(s *natssink.Sink[Event], producers, events int) int {
	var accepted atomic.Int64
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			ok := 0
			for i := range events {
				if s.Push(Event{Producer: p, Seq: i, At: time.Now().UnixNano()}) {
					ok++
				}
			}
			accepted.Add(int64(ok))
		})
	}
	wg.Wait()
	return int(accepted.Load())
}
