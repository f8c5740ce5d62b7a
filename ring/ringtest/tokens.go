package ringtest

import (
	"errors"
	"fmt"
	"sync"

	"github.com/shardedsink/shardedsink/ring"
)

// checkTokens keeps values flowing through a small ring while two token
// channels prove, at every call, that the ring has room or holds a value:
//
//   - space holds capacity tokens. A producer takes one before TryPush and a
//     consumer gives one back after its TryPop returned. While a producer
//     pushes, at most capacity-1 other values are in the ring, so TryPush
//     must succeed.
//   - items gets a token after each successful TryPush, and a consumer takes
//     one before TryPop. While a consumer pops, the pushes that completed
//     outnumber the other pops that have started, so at least one value is
//     in the ring and TryPop must succeed.
//
// Unlike the fill and drain rounds, pushes and pops overlap here and the ring
// wraps thousands of times.
func checkTokens(f ring.Factory[int], short bool) error {
	n := 4_000
	if short {
		n = 400
	}
	var errs []error
	for _, c := range []transferCase{
		{capacity: 1, producers: 4, consumers: 4, perProducer: n},
		{capacity: 4, producers: 8, consumers: 8, perProducer: n},
		{capacity: 7, producers: 3, consumers: 5, perProducer: n},
		{capacity: 64, producers: 8, consumers: 2, perProducer: n},
	} {
		if err := tokens(f, c); err != nil {
			errs = append(errs, fmt.Errorf("%v: %w", c, err))
		}
	}
	return errors.Join(errs...)
}

func tokens(f ring.Factory[int], c transferCase) error {
	r := f(c.capacity)
	d := startDeadline()
	space := make(chan struct{}, c.capacity)
	for range c.capacity {
		space <- struct{}{}
	}
	items := make(chan struct{}, c.capacity) // never more than capacity outstanding
	abort := make(chan struct{})
	var once sync.Once
	var firstErr error
	fail := func(err error) {
		once.Do(func() {
			firstErr = err
			close(abort)
		})
	}

	var wg sync.WaitGroup
	for p := range c.producers {
		wg.Go(func() {
			for seq := range c.perProducer {
				select {
				case <-space:
				case <-abort:
					return
				case <-d.passed:
					fail(errStalled)
					return
				}
				if !r.TryPush(encode(p, seq)) {
					fail(fmt.Errorf("producer %d: TryPush of its value %d failed on a ring with room: spurious full", p, seq))
					return
				}
				items <- struct{}{}
			}
		})
	}
	total := c.producers * c.perProducer
	received := make([][]int, c.consumers)
	for i := range c.consumers {
		quota := total / c.consumers
		if i < total%c.consumers {
			quota++
		}
		wg.Go(func() {
			got := make([]int, 0, quota)
			defer func() { received[i] = got }()
			for range quota {
				select {
				case <-items:
				case <-abort:
					return
				case <-d.passed:
					fail(errStalled)
					return
				}
				v, ok := r.TryPop()
				if !ok {
					fail(fmt.Errorf("consumer %d: TryPop failed on a ring holding a value: spurious empty", i))
					return
				}
				got = append(got, v)
				space <- struct{}{}
			}
		})
	}
	wg.Wait()
	if err := d.stop(); err != nil && firstErr == nil {
		firstErr = err
	}
	if firstErr != nil {
		return firstErr
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
