package vyukov_test

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/ring/vyukov"
)

// ForcePush, TryPush and TryPop agree with a bounded FIFO model in which a
// forced push into a full queue displaces the oldest value.
func TestForcePushFollowsADisplaceOldestModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, capacity := range []int{1, 2, 3, 7, 8} {
		r := vyukov.New[int](capacity)
		var model []int
		next := 0
		for step := range 20000 {
			switch rng.IntN(3) {
			case 0:
				old, displaced, ok := r.ForcePush(next)
				require.True(t, ok)
				if len(model) == capacity {
					require.True(t, displaced, "capacity %d, step %d: a full ring displaces", capacity, step)
					require.Equal(t, model[0], old, "capacity %d, step %d: the oldest is displaced", capacity, step)
					model = model[1:]
				} else {
					require.False(t, displaced, "capacity %d, step %d", capacity, step)
					require.Zero(t, old)
				}
				model = append(model, next)
				next++
			case 1:
				ok := r.TryPush(next)
				require.Equal(t, len(model) < capacity, ok, "capacity %d, step %d", capacity, step)
				if ok {
					model = append(model, next)
				}
				next++
			default:
				v, ok := r.TryPop()
				require.Equal(t, len(model) > 0, ok, "capacity %d, step %d", capacity, step)
				if ok {
					require.Equal(t, model[0], v, "capacity %d, step %d", capacity, step)
					model = model[1:]
				}
			}
			require.Equal(t, len(model), r.Len(), "capacity %d, step %d", capacity, step)
		}
	}
}

// Under contention every value is accounted for exactly once: popped by a
// consumer, displaced by exactly one ForcePush, or left in the ring.
func TestForcePushLosesAndRepeatsNothingUnderContention(t *testing.T) {
	const producers, perProducer, consumers = 4, 5000, 2
	for _, capacity := range []int{1, 2, 4} {
		r := vyukov.New[int](capacity)
		var mu sync.Mutex
		seen := make(map[int]int)
		record := func(vs ...int) {
			mu.Lock()
			for _, v := range vs {
				seen[v]++
			}
			mu.Unlock()
		}
		var wg sync.WaitGroup
		done := make(chan struct{})
		for p := range producers {
			wg.Go(func() {
				var displaced []int
				for i := range perProducer {
					old, d, ok := r.ForcePush(p*perProducer + i)
					if !ok {
						t.Errorf("ForcePush on an open ring reported closed")
						return
					}
					if d {
						displaced = append(displaced, old)
					}
				}
				record(displaced...)
			})
		}
		var cwg sync.WaitGroup
		for range consumers {
			cwg.Go(func() {
				var popped []int
				for {
					if v, ok := r.TryPop(); ok {
						popped = append(popped, v)
						continue
					}
					select {
					case <-done:
						record(popped...)
						return
					default:
					}
				}
			})
		}
		wg.Wait()
		close(done)
		cwg.Wait()
		for {
			v, ok := r.TryPop()
			if !ok {
				break
			}
			record(v)
		}
		require.Len(t, seen, producers*perProducer, "capacity %d: a value was lost", capacity)
		for v, n := range seen {
			require.Equal(t, 1, n, "capacity %d: value %d accounted %d times", capacity, v, n)
		}
	}
}

// A closed ring refuses ForcePush, and a ForcePush racing Close either
// lands before it or fails; nothing is lost either way.
func TestForcePushRacingCloseLosesNothing(t *testing.T) {
	for round := range 300 {
		r := vyukov.New[int](2)
		var mu sync.Mutex
		accounted, accepted := 0, 0
		var wg sync.WaitGroup
		for p := range 3 {
			wg.Go(func() {
				a, d := 0, 0
				for i := range 20 {
					_, displaced, ok := r.ForcePush(p*100 + i)
					if ok {
						a++
					}
					if displaced {
						d++
					}
				}
				mu.Lock()
				accepted += a
				accounted += d
				mu.Unlock()
			})
		}
		wg.Go(func() { r.Close() })
		wg.Wait()
		for {
			if _, ok := r.TryPop(); !ok {
				break
			}
			accounted++
		}
		require.Equal(t, accepted, accounted, "round %d: every accepted value is displaced once or still in the ring", round)
		_, _, ok := r.ForcePush(1)
		require.False(t, ok, "round %d: a closed ring refuses ForcePush", round)
	}
}
