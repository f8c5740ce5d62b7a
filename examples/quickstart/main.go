// Command quickstart is the sink's demo: many goroutines push events into a
// sink without waiting, a drain worker per shard counts them in batches, the
// producers stop, Shutdown drains what is buffered, and the program prints,
// in a dozen lines, what it did and what it counted: the pushes accepted and
// dropped, the values and batches Drain received, and the sink's Stats
// summed up per shard. The figures are counts, checked against each other
// before the program exits; the one duration is the wall-clock time the
// producers took, which depends on the machine.
//
// By default each producer pushes its events in bursts of 100 with a pause of
// -pace between bursts, like a busy request handler, and the sink keeps up.
// With -pace 0 the producers push as fast as they can, far faster than the
// two drain workers of a 2-core machine take values out, and the rings fill;
// but this Drain is fast, so a push into a full ring waits for its worker
// (the hand-off, at most Config.HandOffWait) instead of shedding, and few
// or none are dropped: 0 or 1 of 640,000 on a 2-core VM. With -handoff=false
// as well (Config.DisableHandOff) a push into a full ring sheds at once:
// there about 80 % of them were dropped and counted.
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -pace 0
//	go run ./examples/quickstart -pace 0 -handoff=false
//	go run ./examples/quickstart -producers 256 -events 20000 -ring 1024 -pace 0
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
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
	handOff := flag.Bool("handoff", true, "let a push into a full ring wait for a drain worker short of CPU; false sheds at once")
	flag.Parse()
	if err := run(os.Stdout, *producers, *events, *ringCap, *pace, *handOff); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// run pushes producers x events events into a sink and writes the report to w.
// handOff false sets Config.DisableHandOff.
func run(w io.Writer, producers, events, ringCap int, pace time.Duration, handOff bool) error {
	var drained, batches atomic.Int64
	var errorsSeen atomic.Int64
	s, err := sink.New(sink.Config[Event]{Name: "events", RingCapacity: ringCap, DisableHandOff: !handOff},
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
			// Sink.Push, the recommended push: its cost stays flat however
			// many goroutines push at once. (A Handle, s.Handle(), keeps the
			// order of one producer's events instead.)
			n := int64(0)
			for i := range events {
				ev := Event{RequestID: uint64(p)<<32 | uint64(i), Route: "/cart", Status: 200, Latency: time.Millisecond}
				if i%100 == 0 {
					ev.Status = 503
				}
				if s.Push(ev) {
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
	st := s.Stats()
	how := fmt.Sprintf("in bursts of 100 with a %v pause after each", pace)
	if pace == 0 {
		how = "as fast as they can"
	}
	fmt.Fprintf(w, "%d goroutines each pushed %d events %s,\n", producers, events, how)
	fmt.Fprintf(w, "into a sink of %d shards (a ring of %d events and a drain worker each).\n", st.Shards, st.RingCapacity)
	if !handOff {
		fmt.Fprintln(w, "The hand-off was off: a push into a full ring was dropped at once.")
	}
	fmt.Fprintf(w, "The producers took %v (wall clock, first push to last return).\n\n", pushing.Round(time.Millisecond))
	fmt.Fprintf(w, "pushes    %9d attempted = %d accepted + %d dropped (ring full)\n", total, accepted.Load(), s.Dropped())
	fmt.Fprintf(w, "Drain     %9d events in %d batches, %.0f per batch on average\n",
		drained.Load(), batches.Load(), float64(drained.Load())/float64(max(batches.Load(), 1)))
	fmt.Fprintf(w, "          %9d of them with status 503 (every 100th event pushed has it)\n", errorsSeen.Load())
	minD, maxD, shedding := st.PerShard[0].Drained, st.PerShard[0].Drained, 0
	for _, sh := range st.PerShard {
		minD, maxD = min(minD, sh.Drained), max(maxD, sh.Drained)
		if sh.Dropped > 0 {
			shedding++
		}
	}
	fmt.Fprintf(w, "per shard %9d to %d events drained; %d of %d shards dropped any\n", minD, maxD, shedding, st.Shards)
	fmt.Fprintf(w, "Shutdown  %9d events left queued\n\n", st.Queued)
	if accepted.Load()+int64(s.Dropped()) != total || drained.Load() != accepted.Load() ||
		st.Drained != uint64(drained.Load()) || st.Queued != 0 {
		return fmt.Errorf("accounting does not add up: attempted %d, accepted %d, dropped %d, drained %d (Stats: %d), queued %d",
			total, accepted.Load(), s.Dropped(), drained.Load(), st.Drained, st.Queued)
	}
	fmt.Fprintln(w, "Every push was accepted or counted as dropped, and every accepted")
	fmt.Fprintln(w, "event reached Drain exactly once. The sink keeps no accepted counter:")
	fmt.Fprintln(w, "the producers counted Push's true results themselves.")
	return nil
}
