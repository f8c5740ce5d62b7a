// Command quickstart is the sink's demo: many goroutines push events into a
// sink without waiting, a drain worker per shard counts them in batches, the
// producers stop, Shutdown drains what is buffered, and the program prints
// what was accepted, drained and shed, and the sink's Stats as JSON.
//
// By default each producer pushes its events in bursts of 100 with a pause of
// -pace between bursts, like a busy request handler, and the sink keeps up.
// With -pace 0 the producers push as fast as they can, far faster than the
// two drain workers of a 2-core machine take values out, and the rings shed.
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -pace 0
//	go run ./examples/quickstart -producers 256 -events 20000 -ring 1024 -pace 0
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

	"github.com/shardedsink/shardedsink/sink"
)

// Event is a telemetry record, as a request handler would emit one.
type Event struct {
	RequestID uint64
	Route     string
	Status    int
	Latency   time.Duration
}

func main() {
	producers := flag.Int("producers", 64, "goroutines pushing events")
	events := flag.Int("events", 10000, "events each producer pushes")
	ringCap := flag.Int("ring", 0, "ring capacity per shard; 0 for the default 8192")
	pace := flag.Duration("pace", time.Millisecond, "pause after every 100 events of a producer; 0 to push flat out")
	flag.Parse()
	if err := run(*producers, *events, *ringCap, *pace); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(producers, events, ringCap int, pace time.Duration) error {
	var drained, batches atomic.Int64
	var errorsSeen atomic.Int64
	s, err := sink.New(sink.Config[Event]{Name: "events", RingCapacity: ringCap},
		sink.ActionFunc[Event](func(_ context.Context, batch []Event) {
			// A real Drain would encode the batch and ship it.
			for _, ev := range batch {
				if ev.Status >= 500 {
					errorsSeen.Add(1)
				}
			}
			drained.Add(int64(len(batch)))
			batches.Add(1)
		}))
	if err != nil {
		return err
	}

	start := time.Now()
	var accepted atomic.Int64
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			h := s.Handle() // one handle per producer, kept
			n := int64(0)
			for i := range events {
				ev := Event{RequestID: uint64(p)<<32 | uint64(i), Route: "/cart", Status: 200, Latency: time.Millisecond}
				if i%100 == 0 {
					ev.Status = 503
				}
				if h.Push(ev) {
					n++
				}
				if pace > 0 && i%100 == 99 {
					time.Sleep(pace)
				}
			}
			accepted.Add(n) // count the true results yourself: the sink keeps no accepted counter
		})
	}
	wg.Wait() // producers quiesced
	pushing := time.Since(start)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		return err
	}

	total := int64(producers * events)
	fmt.Printf("pushed %d events from %d goroutines in %v\n", total, producers, pushing.Round(time.Millisecond))
	fmt.Printf("accepted %d, dropped %d, drained %d in %d batches (%d with status >= 500)\n",
		accepted.Load(), s.Dropped(), drained.Load(), batches.Load(), errorsSeen.Load())
	if accepted.Load()+int64(s.Dropped()) != total || drained.Load() != accepted.Load() {
		return fmt.Errorf("accounting does not add up")
	}
	st, err := json.MarshalIndent(s.Stats(), "", "  ")
	if err != nil {
		return err
	}
	fmt.Printf("stats: %s\n", st)
	return nil
}
