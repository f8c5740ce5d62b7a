package ringtest

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/shardedsink/shardedsink/ring"
)

// checkModel runs random operations against the ring and the fifo model in
// lockstep. The odds of a push drift between phases, so that every capacity
// is driven to full and back to empty many times.
func checkModel(f ring.Factory[int], short bool) error {
	steps := 20_000
	if short {
		steps = 4_000
	}
	rng := rand.New(rand.NewPCG(1, 2)) // fixed seed: a failure reproduces
	for _, capacity := range []int{1, 2, 3, 5, 8, 16, 100} {
		l := newLockstep(f, capacity)
		if err := l.sizes(); err != nil {
			return fmt.Errorf("capacity %d: new ring: %w", capacity, err)
		}
		pushOdds := 0.5
		for i := range steps {
			if i%(2*capacity+8) == 0 {
				pushOdds = []float64{0.1, 0.5, 0.9}[rng.IntN(3)]
			}
			var err error
			if rng.Float64() < pushOdds {
				err = l.push()
			} else {
				err = l.pop()
			}
			if err != nil {
				return fmt.Errorf("capacity %d: %w", capacity, err)
			}
		}
	}
	return nil
}

// checkExactCapacity fills and drains rings of awkward and round capacities
// lap after lap, from several starting offsets so that the wrap-around falls
// at different slots. On every lap exactly capacity pushes succeed; the next
// push fails and leaves the ring as it was, which the pops then show; the
// pops return the values in order; and the next pop fails with the zero
// value.
func checkExactCapacity(f ring.Factory[int], short bool) error {
	laps := 5
	if short {
		laps = 3
	}
	for _, capacity := range []int{1, 2, 3, 7, 8, 100} {
		offsets := []int{0, 1, capacity / 2, capacity - 1}
		slices.Sort(offsets)
		for _, offset := range slices.Compact(offsets) {
			l := newLockstep(f, capacity)
			for range offset {
				if err := l.push(); err != nil {
					return fmt.Errorf("capacity %d, offset %d: %w", capacity, offset, err)
				}
				if err := l.pop(); err != nil {
					return fmt.Errorf("capacity %d, offset %d: %w", capacity, offset, err)
				}
			}
			for lap := range laps {
				if err := fillAndDrain(l); err != nil {
					return fmt.Errorf("capacity %d, offset %d, lap %d: %w", capacity, offset, lap, err)
				}
			}
		}
	}
	return nil
}

// fillAndDrain pushes until the model is full, makes one push that must
// fail, pops everything, and makes one pop that must fail.
func fillAndDrain(l *lockstep) error {
	if len(l.model.values) != 0 {
		return fmt.Errorf("model not empty at the start of a lap")
	}
	for range l.model.capacity {
		if err := l.push(); err != nil {
			return err
		}
	}
	if err := l.push(); err != nil { // the model says: full, ring unchanged
		return err
	}
	for range l.model.capacity {
		if err := l.pop(); err != nil {
			return err
		}
	}
	return l.pop() // the model says: empty, zero value
}
