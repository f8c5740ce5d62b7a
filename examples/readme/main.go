// Command readme is the complete program of the README: eight goroutines
// push 8,000 events into a sink, the program shuts the sink down and reads
// its Stats. main_test.go keeps the README's copy and its output equal to
// this file and what it prints; snippets_test.go builds every go block of
// the README (in a harness continuing this program) and the package docs.
package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/shardedsink/shardedsink/sink"
)

type Event struct{ Status int }

func main() {
	action := sink.ActionFunc[Event](func(ctx context.Context, batch []Event) {
		// ship it; keep no reference into batch
	})
	s := sink.MustNew(sink.Config[Event]{}, action)

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range 1000 {
				s.Push(Event{Status: 200 + i%2}) // false: dropped and counted
			}
		})
	}
	wg.Wait() // then Shutdown drains the rest

	if err := s.Shutdown(context.Background()); err != nil {
		panic(err)
	}
	st := s.Stats()
	fmt.Printf("drained %d, dropped %d, queued %d\n", st.Drained, st.Dropped, st.Queued)
}
