package mpmc_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// ForceSend racing other senders and receivers never fails on an open
// channel (displacing and pushing are one step with respect to every other
// send, on every backend), and never loses or repeats a value: each one is
// received, returned as displaced by exactly one ForceSend, or left in the
// channel.
func TestForceSendRacingSendsAndReceivesLosesNothing(t *testing.T) {
	const forcers, trySenders, perSender = 2, 2, 20000
	for _, k := range backends {
		t.Run(k.name, func(t *testing.T) {
			s, r := k.open(2)
			var mu sync.Mutex
			seen := make(map[int]int)
			record := func(vs []int) {
				mu.Lock()
				for _, v := range vs {
					seen[v]++
				}
				mu.Unlock()
			}
			var senders, receivers sync.WaitGroup
			start := make(chan struct{}) // every goroutine starts at once: contention from the first send
			for f := range forcers {
				senders.Go(func() {
					<-start
					var back []int
					for i := range perSender {
						v := f*perSender + i
						old, displaced, err := s.ForceSend(v)
						if displaced {
							back = append(back, old)
						}
						if err != nil {
							// The contract allows only nil or ErrClosed, and
							// nothing closes this channel.
							t.Errorf("ForceSend(%d): %v", v, err)
							back = append(back, v) // v stays with the caller
						}
					}
					record(back)
				})
			}
			for p := range trySenders {
				senders.Go(func() {
					<-start
					var back []int
					for i := range perSender {
						v := (forcers+p)*perSender + i
						if s.TrySend(v) != nil {
							back = append(back, v)
						}
					}
					record(back)
				})
			}
			stop := make(chan struct{})
			for range 2 {
				receivers.Go(func() {
					<-start
					var got []int
					for {
						if v, err := r.TryRecv(); err == nil {
							got = append(got, v)
							continue
						}
						select {
						case <-stop:
							record(got)
							return
						default:
						}
					}
				})
			}
			close(start)
			senders.Wait()
			close(stop)
			receivers.Wait()
			var rest []int
			for {
				v, err := r.TryRecv()
				if err != nil {
					break
				}
				rest = append(rest, v)
			}
			record(rest)
			require.Len(t, seen, (forcers+trySenders)*perSender, "a value was lost")
			for v, n := range seen {
				require.Equal(t, 1, n, "value %d accounted %d times", v, n)
			}
		})
	}
}
