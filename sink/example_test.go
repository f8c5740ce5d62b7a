package sink_test

import (
	"context"
	"encoding/json"
	"errors"
	"expvar"
	"fmt"
	"hash/maphash"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/chanring"
	"github.com/shardedsink/shardedsink/ring/mutex"
	"github.com/shardedsink/shardedsink/ring/vyukov"
	"github.com/shardedsink/shardedsink/sink"
)

// Event is a small telemetry record.
type Event struct {
	Route  string
	Status int
}

// The original's quick start in Go: a sink named "events" whose Drain ships
// each batch, a hot producer that keeps a handle, and a producer-quiesced
// shutdown.
func Example() {
	var shipped atomic.Int64
	s, err := sink.New(sink.Config[Event]{Name: "events"},
		sink.ActionFunc[Event](func(ctx context.Context, batch []Event) {
			// Encode and ship batch; keep no reference into it.
			shipped.Add(int64(len(batch)))
		}))
	if err != nil {
		panic(err)
	}

	// Hot producers take a handle once and keep it (one per request,
	// connection or producer object).
	h := s.Handle()
	accepted := h.Push(Event{Route: "/", Status: 200})

	// Stop the producers first, then shut down: what is buffered is drained.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		panic(err)
	}
	fmt.Println("accepted:", accepted, "shipped:", shipped.Load())
	// Output: accepted: true shipped: 1
}

// A service that stops on a signal: by the time it calls Shutdown, the
// signal's ctx has ended, and a Shutdown with it drains nothing (it returns
// an error wrapping context.Canceled that says how many values it left).
// Give Shutdown a fresh timeout ctx instead. A Shutdown whose ctx ended can
// always be resumed by a later one with a live ctx, and once Shutdown has
// begun the rings are closed: a push returns false and is counted.
func ExampleSink_Shutdown() {
	var shipped atomic.Int64
	s, err := sink.New(sink.Config[Event]{Name: "events"},
		sink.ActionFunc[Event](func(ctx context.Context, batch []Event) {
			shipped.Add(int64(len(batch)))
		}))
	if err != nil {
		panic(err)
	}
	sigCtx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	for i := range 3 {
		s.Push(Event{Route: "/", Status: 200 + i})
	}

	stop() // in this example, in place of the signal
	<-sigCtx.Done()
	_ = s.Shutdown(sigCtx) // the mistake: an ended ctx; it may leave values

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil { // resumes what the first call left
		fmt.Println("shutdown:", err)
	}
	fmt.Println("shipped:", shipped.Load(), "push after shutdown:", s.Push(Event{}), "dropped:", s.Dropped())
	// Output: shipped: 3 push after shutdown: false dropped: 1
}

// Many goroutines push without a handle; Flush waits until everything they
// pushed has been drained.
func ExampleSink_Push() {
	var mu sync.Mutex
	perStatus := map[int]int{}
	s := sink.MustNew(sink.Config[Event]{}, sink.ActionFunc[Event](func(_ context.Context, batch []Event) {
		mu.Lock()
		defer mu.Unlock()
		for _, ev := range batch {
			perStatus[ev.Status]++
		}
	}))
	defer s.Shutdown(context.Background())

	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				s.Push(Event{Route: "/api", Status: 200 + 100*((g+i)%2)})
			}
		})
	}
	wg.Wait()
	if err := s.Flush(context.Background()); err != nil {
		panic(err)
	}
	mu.Lock()
	defer mu.Unlock()
	fmt.Println(perStatus[200], perStatus[300], "dropped:", s.Dropped())
	// Output: 400 400 dropped: 0
}

// A keyed handle sends every value for one key to one shard, so the values
// of one tenant keep their order.
func ExampleSink_HandleFor() {
	var mu sync.Mutex
	var order []int
	s := sink.MustNew(sink.Config[int]{Shards: 4}, sink.ActionFunc[int](func(_ context.Context, batch []int) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, batch...)
	}))
	defer s.Shutdown(context.Background())

	seed := maphash.MakeSeed()
	h := s.HandleFor(maphash.String(seed, "tenant-42"))
	for i := range 5 {
		h.Push(i)
	}
	if err := s.Flush(context.Background()); err != nil {
		panic(err)
	}
	mu.Lock()
	defer mu.Unlock()
	fmt.Println(order, s.HandleFor(maphash.String(seed, "tenant-42")) == h)
	// Output: [0 1 2 3 4] true
}

// Stats marshals to JSON, so expvar can publish it at /debug/vars.
func ExampleSink_Stats() {
	s := sink.MustNew(sink.Config[Event]{Name: "events", Shards: 2}, sink.ActionFunc[Event](func(context.Context, []Event) {}))
	defer s.Shutdown(context.Background())

	if expvar.Get("sink_events") == nil { // Publish panics on a second call with one name
		expvar.Publish("sink_events", expvar.Func(func() any { return s.Stats() }))
	}

	var st sink.Stats
	if err := json.Unmarshal([]byte(expvar.Get("sink_events").String()), &st); err != nil {
		panic(err)
	}
	fmt.Printf("%s: %d shards, %d dropped, %d queued\n", st.Name, st.Shards, st.Dropped, st.Queued)
	// Output: events: 2 shards, 0 dropped, 0 queued
}

// Config.Ring swaps the ring behind every shard; nothing else changes, and
// every backend keeps the sink's guarantees. Keep the default, ring/vyukov,
// for lock-free pushes: its closed mark costs a push nothing, and it is the
// one backend that DropOldest can use. Swap in ring/mutex for a backend that
// is simple to reason about, or to compare the lock-free ring with a lock,
// and ring/chanring, a buffered Go channel, for the baseline of what a Go
// program would use instead. Both cost a push their lock plus a guard that
// counts the pushes in flight for Shutdown, and over chanring an idle worker
// can miss a doorbell and find the value only at its recheck (IdleSleep).
// docs/benchmarks.md ("The contended accept path") measures the sink on
// each: rows sharded-vyukov, sharded-mutex and sharded-chanring.
func ExampleConfig_ring() {
	backends := []struct {
		name string
		ring ring.Factory[Event]
	}{
		{"vyukov", nil}, // nil is the default, vyukov.Factory[Event]
		{"mutex", mutex.Factory[Event]},
		{"chanring", chanring.Factory[Event]},
	}
	for _, b := range backends {
		var drained atomic.Int64
		s, err := sink.New(sink.Config[Event]{Name: b.name, Ring: b.ring},
			sink.ActionFunc[Event](func(_ context.Context, batch []Event) {
				drained.Add(int64(len(batch)))
			}))
		if err != nil {
			panic(err)
		}
		for i := range 100 {
			s.Push(Event{Route: "/", Status: 200 + i%2})
		}
		if err := s.Shutdown(context.Background()); err != nil {
			panic(err)
		}
		fmt.Printf("%s: drained %d, dropped %d\n", b.name, drained.Load(), s.Dropped())
	}

	// DropOldest needs a ring that displaces its oldest value in one step
	// (vyukov's ForcePush); New refuses a backend that cannot.
	drop := sink.ActionFunc[Event](func(context.Context, []Event) {})
	_, err := sink.New(sink.Config[Event]{Ring: mutex.Factory[Event], Overflow: sink.DropOldest}, drop)
	fmt.Println("mutex with DropOldest:", errors.Is(err, sink.ErrInvalidConfig))
	s := sink.MustNew(sink.Config[Event]{Ring: vyukov.Factory[Event], Overflow: sink.DropOldest}, drop)
	fmt.Println("vyukov with DropOldest:", s.Shutdown(context.Background()))
	// Output:
	// vyukov: drained 100, dropped 0
	// mutex: drained 100, dropped 0
	// chanring: drained 100, dropped 0
	// mutex with DropOldest: true
	// vyukov with DropOldest: <nil>
}
