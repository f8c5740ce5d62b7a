package sink_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/sink"
)

// These tests run with IdleSleep: time.Hour, so that a parked worker has no
// safety net to fall back on: a doorbell that a producer fails to ring (or a
// worker fails to hear) leaves values undrained, and the test sees it.
// Every other concurrent test runs with the 100 ms default, which hides a
// lost doorbell behind a short delay.

// watchdog panics, with msg, if the test is still running after d of real
// time: a test that would hang fails loudly instead. It is started outside
// any synctest bubble, so its clock is the real one.
func watchdog(t *testing.T, d time.Duration, msg string) {
	t.Helper()
	timer := time.AfterFunc(d, func() {
		panic(fmt.Sprintf("%s: still running after %v: %s", t.Name(), d, msg))
	})
	t.Cleanup(func() { timer.Stop() })
}

// counter is an Action that counts the values it is handed.
type counter struct{ n atomic.Int64 }

func (c *counter) Drain(_ context.Context, batch []ev) { c.n.Add(int64(len(batch))) }

// Rounds of: every worker parked (synctest.Wait returns only once every
// goroutine of the bubble is durably blocked, so the workers are on their
// doorbells), then several producers push a few values each at once, then
// every goroutine blocked again. A worker that slept through a push is
// still parked with an hour to go on its timer, and fake time does not
// move while the test waits, so the count is short at once.
func TestDoorbellStressParkedWorkersWakeForEveryPush(t *testing.T) {
	watchdog(t, 5*time.Minute, "the doorbell stress rounds")
	for _, b := range backends[:2] { // vyukov and mutex: Len is synchronised with TryPush
		for _, shards := range []int{1, 2, 4} {
			for _, stealing := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/shards=%d/stealing=%t", b.name, shards, stealing), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						doorbellRounds(t, b.factory, shards, stealing, 500)
					})
				})
			}
		}
	}
}

func doorbellRounds(t *testing.T, factory ring.Factory[ev], shards int, stealing bool, rounds int) {
	c := &counter{}
	s, err := sink.New(sink.Config[ev]{
		Shards: shards, RingCapacity: 1024, BatchSize: 8, Ring: factory,
		DisableStealing: !stealing, IdleSleep: time.Hour, OverloadInterval: time.Hour, Logger: quiet,
	}, c)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Shutdown(context.Background())) }()
	const producers = 4
	rng := rand.New(rand.NewPCG(uint64(shards), 1))
	var accepted atomic.Int64
	for round := range rounds {
		synctest.Wait() // every worker parked on its doorbell
		var wg sync.WaitGroup
		for p := range producers {
			n := 1 + rng.IntN(12)
			path := rng.IntN(3)
			key := rng.Uint64()
			yields := rng.Uint64() // bit i: yield before push i
			wg.Go(func() {
				h := s.Handle()
				for i := range n {
					if yields&(1<<i) != 0 {
						// Let the woken workers run dry and head for
						// their doorbells while this producer still
						// pushes: the window a lost doorbell needs.
						runtime.Gosched()
					}
					v := ev{round*100 + p*10 + i}
					var ok bool
					switch path {
					case 0:
						ok = h.Push(v)
					case 1:
						ok = s.Push(v)
					default:
						ok = s.HandleFor(key).Push(v)
					}
					if ok {
						accepted.Add(1)
					}
				}
			})
		}
		wg.Wait()
		synctest.Wait()
		if got, want := c.n.Load(), accepted.Load(); got != want {
			st := s.Stats()
			t.Fatalf("round %d: %d values accepted, %d drained: a doorbell was lost (queued per shard: %+v)",
				round, want, got, st.PerShard)
		}
	}
	require.Zero(t, s.Dropped())
}

// Flush while producers push, with the workers parking between their
// bursts and a safety net an hour long: every Flush returns well within its
// bound, and every value accepted before it has been drained.
func TestFlushUnderLiveProducersWithoutTheSafetyNet(t *testing.T) {
	watchdog(t, 5*time.Minute, "Flush under live producers")
	for _, b := range backends[:2] {
		for _, stealing := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stealing=%t", b.name, stealing), func(t *testing.T) {
				flushUnderLiveProducers(t, b.factory, stealing)
			})
		}
	}
}

func flushUnderLiveProducers(t *testing.T, factory ring.Factory[ev], stealing bool) {
	var accepted, drained idLog
	s := newSink(t, sink.Config[ev]{
		Shards: 4, RingCapacity: 1 << 14, BatchSize: 16, Ring: factory,
		DisableStealing: !stealing, IdleSleep: time.Hour, OverloadInterval: time.Hour, Logger: quiet,
	}, &drained)
	const producers, per = 4, 3000
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(p), 2))
			h := s.Handle()
			for i := range per {
				id := p*per + i
				if h.Push(ev{id}) {
					accepted.add(id)
				}
				if rng.IntN(16) == 0 {
					// A pause long enough for the workers to run dry and
					// park, so that the next push has to ring.
					time.Sleep(time.Duration(rng.IntN(200)) * time.Microsecond)
				}
			}
		})
	}
	producing := make(chan struct{})
	go func() { wg.Wait(); close(producing) }()
	flushWhileProducing(t, s, &accepted, &drained, producing)
}
