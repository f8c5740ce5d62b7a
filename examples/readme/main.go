// Command readme is the complete program of the README: eight goroutines
// push 8,000 events into a sink, the program shuts the sink down and reads
// its Stats. main_test.go keeps the README's copy and its output equal to
// this file and what it prints.
package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/sink"
)

type Event struct {
	Route  string
	Status int
}

func main() {
	var shipped atomic.Int64
	s, err := sink.New(sink.Config[Event]{Name: "events"},
		sink.ActionFunc[Event](func(ctx context.Context, batch []Event) {
			shipped.Add(int64(len(batch))) // encode and ship the batch here; keep no reference into it
		}))
	if err != nil {
		panic(err)
	}

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range 1000 {
				s.Push(Event{Route: "/cart", Status: 200 + i%2}) // never blocks; false: shed and counted
			}
		})
	}
	wg.Wait() // stop the producers first, then shut down: what is buffered is drained

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		panic(err)
	}
	st := s.Stats()
	fmt.Printf("shipped %d, dropped %d, queued %d\n", shipped.Load(), st.Dropped, st.Queued)
}
