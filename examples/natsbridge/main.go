// Command natsbridge feeds a NATS subject from a sink: producers push
// events without waiting, and the sink's drain workers publish each batch
// as one message (through JetStream, waiting for its ack, unless -ack=false),
// counting what was published, acknowledged and lost.
//
// By default it starts an embedded nats-server in-process (JetStream on a
// temporary store, listening on 127.0.0.1 on a random port), so that it
// runs on a fresh machine; -url points it at a real server or cluster. A
// subscriber on the subject counts the events that arrive, and the program
// fails unless it received every event that was published.
//
//	go run .                                  # embedded server, JetStream acks
//	go run . -ack=false                       # core NATS, fire-and-forget
//	go run . -url nats://127.0.0.1:4222 -producers 64 -events 100000
//	go run . -max-delay 100ms                 # fuller messages from a slow stream
//
// -max-delay sets the sink's MaxDelay: a worker holding fewer than
// BatchSize events waits up to that long for more before it publishes, so
// a trickle of events goes out as one message per MaxDelay instead of one
// per event. The default, 0, publishes at once.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/shardedsink/shardedsink/sink"
)

// options is what the flags set.
type options struct {
	url       string
	subject   string
	stream    string
	ack       bool
	producers int
	events    int
	shards    int
	timeout   time.Duration
	maxDelay  time.Duration
}

// result is what a run reports.
type result struct {
	Server   string      `json:"server"`
	Pushed   int         `json:"pushed"`
	Accepted int         `json:"accepted"`
	Dropped  uint64      `json:"dropped"` // refused by the sink's full rings
	Bridge   BridgeStats `json:"bridge"`
	Received uint64      `json:"received"` // events the subscriber got
	Elapsed  string      `json:"elapsed"`
}

func main() {
	var o options
	flag.StringVar(&o.url, "url", "", "NATS server URL; empty starts an embedded server on 127.0.0.1")
	flag.StringVar(&o.subject, "subject", "shardedsink.events", "subject the batches are published to")
	flag.StringVar(&o.stream, "stream", "SHARDEDSINK_EVENTS", "JetStream stream that stores the subject (with -ack)")
	flag.BoolVar(&o.ack, "ack", true, "publish through JetStream and wait for each batch's ack")
	flag.IntVar(&o.producers, "producers", 16, "goroutines pushing events")
	flag.IntVar(&o.events, "events", 5000, "events each producer pushes")
	flag.IntVar(&o.shards, "shards", 0, "sink shards (0: the sink's default)")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Second, "most time to publish one batch, ack included")
	flag.DurationVar(&o.maxDelay, "max-delay", 0, "most time a short batch waits for more events before it is published (the sink's MaxDelay; 0: at once)")
	flag.Parse()

	res, err := run(context.Background(), o)
	out, _ := json.MarshalIndent(res, "", "  ")
	fmt.Println(string(out))
	if err != nil {
		fmt.Fprintln(os.Stderr, "natsbridge:", err)
		os.Exit(1)
	}
}

// run starts the server (unless o.url is set), pushes the events, shuts the
// sink down and waits for the subscriber. It fails unless the subscriber
// received exactly the events published.
func run(ctx context.Context, o options) (res result, err error) {
	start := time.Now()
	url := o.url
	if url == "" {
		dir, err := os.MkdirTemp("", "natsbridge-")
		if err != nil {
			return res, err
		}
		defer os.RemoveAll(dir)
		srv, err := startServer(dir)
		if err != nil {
			return res, err
		}
		defer srv.WaitForShutdown()
		defer srv.Shutdown()
		url = srv.ClientURL()
	}
	res.Server = url

	nc, err := connect(url)
	if err != nil {
		return res, err
	}
	defer nc.Close()
	if o.ack {
		if err := ensureStream(ctx, nc, o.stream, o.subject); err != nil {
			return res, err
		}
	}
	var received atomic.Uint64
	sub, err := subscribe(nc, o.subject, &received)
	if err != nil {
		return res, err
	}
	defer sub.Unsubscribe()

	bridge, err := NewBridge(nc, Config{Subject: o.subject, Ack: o.ack, Timeout: o.timeout})
	if err != nil {
		return res, err
	}
	s, err := sink.New(sink.Config[Event]{
		Name:     "natsbridge",
		Shards:   o.shards,
		MaxDelay: o.maxDelay,
		// The producers push flat out and overrun the rings on purpose;
		// the result reports the drops, so the monitor stays quiet.
		OnOverload: func(sink.Overload) {},
	}, bridge)
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
	res.Dropped = s.Dropped()
	res.Bridge = bridge.Stats()

	// Everything published has left the client once Flush returns; wait
	// (bounded) for the subscriber to have it all.
	if err := nc.FlushTimeout(10 * time.Second); err != nil {
		return res, fmt.Errorf("flush: %w", err)
	}
	want := res.Bridge.PublishedEvents
	for deadline := time.Now().Add(10 * time.Second); received.Load() < want && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	res.Received = received.Load()
	res.Elapsed = time.Since(start).Round(time.Millisecond).String()
	if res.Received != want {
		return res, fmt.Errorf("subscriber received %d events, %d were published", res.Received, want)
	}
	if got := res.Bridge.PublishedEvents + res.Bridge.FailedEvents; got != uint64(res.Accepted) {
		return res, fmt.Errorf("published %d + failed %d events != accepted %d", res.Bridge.PublishedEvents, res.Bridge.FailedEvents, res.Accepted)
	}
	return res, nil
}

// subscribe counts into n the events of every message on subject, with no
// limit on what the client holds for it (so that it is never a slow
// consumer whose messages the client drops).
func subscribe(nc *nats.Conn, subject string, n *atomic.Uint64) (*nats.Subscription, error) {
	sub, err := nc.Subscribe(subject, func(m *nats.Msg) {
		n.Add(uint64(countLines(m.Data)))
	})
	if err != nil {
		return nil, err
	}
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		return nil, err
	}
	return sub, nc.Flush() // the server has the subscription before anything is published
}

// countLines counts the newline-terminated lines of p: one per event.
func countLines(p []byte) int {
	n := 0
	for _, c := range p {
		if c == '\n' {
			n++
		}
	}
	return n
}

// push runs producers goroutines that each push events events through a
// handle of their own, and returns how many the sink accepted.
func push(s *sink.Sink[Event], producers, events int) int {
	var accepted atomic.Int64
	var wg sync.WaitGroup
	for p := range producers {
		h := s.Handle()
		wg.Go(func() {
			ok := 0
			for i := range events {
				if h.Push(Event{Producer: p, Seq: i, At: time.Now().UnixNano()}) {
					ok++
				}
			}
			accepted.Add(int64(ok))
		})
	}
	wg.Wait()
	return int(accepted.Load())
}
