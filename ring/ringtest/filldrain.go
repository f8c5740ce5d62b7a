package ringtest

import (
	"errors"
	"fmt"
	"sync"

	"github.com/shardedsink/shardedsink/ring"
)

// checkFillDrain here and checkTokens in tokens.go prove, by the way they
// are built, that the ring is not full when a TryPush starts and not empty
// when a TryPop starts, so a single false is a spurious failure. Neither
// depends on timing, so neither can flake on a correct ring.

// fillDrainCase fills a ring of capacity producers*perProducer from all
// producers at once, then drains it from all consumers at once.
type fillDrainCase struct {
	producers, perProducer, consumers, rounds int
}

func (c fillDrainCase) String() string {
	return fmt.Sprintf("capacity %d, %d producers then %d consumers",
		c.producers*c.perProducer, c.producers, c.consumers)
}

// checkFillDrain runs the fill and drain rounds. In the fill phase at most
// capacity-1 other values can be in the ring while a producer pushes, so every
// TryPush must succeed; afterwards one more push must fail. In the drain
// phase each consumer pops a fixed quota and the quotas add up to the
// capacity, so while a consumer pops, at least its own value is still in the
// ring and every TryPop must succeed; afterwards one more pop must fail. Each
// round starts one slot further on, so the fill wraps at a different slot.
func checkFillDrain(f ring.Factory[int], short bool) error {
	scale := 1
	if short {
		scale = 4 // the big cases still run one round
	}
	var errs []error
	for _, c := range []fillDrainCase{
		{producers: 2, perProducer: 8192, consumers: 2, rounds: 4 / scale},
		{producers: 8, perProducer: 1024, consumers: 8, rounds: 4 / scale},
		{producers: 4, perProducer: 1, consumers: 4, rounds: 400 / scale},
		{producers: 3, perProducer: 3, consumers: 2, rounds: 200 / scale},
		{producers: 2, perProducer: 50, consumers: 5, rounds: 40 / scale},
	} {
		if err := fillDrain(f, c); err != nil {
			errs = append(errs, fmt.Errorf("%v: %w", c, err))
		}
	}
	return errors.Join(errs...)
}

func fillDrain(f ring.Factory[int], c fillDrainCase) error {
	capacity := c.producers * c.perProducer
	r := f(capacity)
	for round := range c.rounds {
		// Move the start on by one slot with a push and a pop.
		if !r.TryPush(-1) {
			return fmt.Errorf("round %d: TryPush failed on an empty ring", round)
		}
		if v, ok := r.TryPop(); !ok || v != -1 {
			return fmt.Errorf("round %d: TryPop() = (%d, %t) on a ring holding -1", round, v, ok)
		}
		if err := fill(r, c); err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		if err := drain(r, c); err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
	}
	return nil
}

// fill pushes from all producers at once; every push must succeed.
func fill(r ring.Ring[int], c fillDrainCase) error {
	line := newStartLine(c.producers)
	errs := make([]error, c.producers)
	var wg sync.WaitGroup
	for p := range c.producers {
		wg.Go(func() {
			line.wait()
			for seq := range c.perProducer {
				if !r.TryPush(encode(p, seq)) {
					errs[p] = fmt.Errorf("producer %d: TryPush of its value %d failed on a ring with room: spurious full", p, seq)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	capacity := c.producers * c.perProducer
	if r.TryPush(0) {
		return fmt.Errorf("TryPush succeeded on a ring holding %d values with capacity %d", capacity, capacity)
	}
	if n := r.Len(); n != capacity {
		return fmt.Errorf("Len() = %d on a full ring of capacity %d", n, capacity)
	}
	return nil
}

// drain pops from all consumers at once, each its quota; every pop must
// succeed, and every value must arrive once and in per-producer order.
func drain(r ring.Ring[int], c fillDrainCase) error {
	capacity := c.producers * c.perProducer
	line := newStartLine(c.consumers)
	errs := make([]error, c.consumers)
	received := make([][]int, c.consumers)
	var wg sync.WaitGroup
	for i := range c.consumers {
		quota := capacity / c.consumers
		if i < capacity%c.consumers {
			quota++
		}
		wg.Go(func() {
			line.wait()
			got := make([]int, 0, quota)
			for range quota {
				v, ok := r.TryPop()
				if !ok {
					errs[i] = fmt.Errorf("consumer %d: TryPop failed after %d of its %d values, with values left: spurious empty",
						i, len(got), quota)
					return
				}
				got = append(got, v)
			}
			received[i] = got
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	t := newTally(c.producers, c.perProducer)
	for i, got := range received {
		if err := t.add(i, got); err != nil {
			return err
		}
	}
	if err := t.complete(); err != nil {
		return err
	}
	return drained(r)
}
