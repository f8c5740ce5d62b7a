package ringtest

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/shardedsink/shardedsink/ring"
)

// transferCase is one run of producers and consumers over a shared ring.
type transferCase struct {
	capacity    int
	producers   int
	consumers   int
	perProducer int
	samplers    int // goroutines that call Len and Cap throughout
}

func (c transferCase) String() string {
	return fmt.Sprintf("capacity %d, %d producers x %d consumers, %d values each",
		c.capacity, c.producers, c.consumers, c.perProducer)
}

// transfer moves every producer's values through one ring. Producers retry
// on full and consumers retry on empty, yielding in between, so this checks
// delivery, not the absence of spurious failures: every value must arrive
// exactly once and in per-producer order. Samplers check 0 <= Len <= Cap and
// that Cap never changes while the others run.
//
// Consumers stop at the first empty TryPop that began after every producer
// had finished: from then on the ring is empty for good, so whatever has not
// arrived was lost.
func transfer(f ring.Factory[int], c transferCase) error {
	r := f(c.capacity)
	d := startDeadline()
	var producersDone, consumersDone atomic.Bool

	var producers sync.WaitGroup
	for p := range c.producers {
		producers.Go(func() {
			for seq := range c.perProducer {
				for !r.TryPush(encode(p, seq)) {
					if d.expired() {
						return
					}
					runtime.Gosched()
				}
			}
		})
	}

	received := make([][]int, c.consumers)
	var consumers sync.WaitGroup
	for i := range c.consumers {
		consumers.Go(func() {
			var got []int
			for {
				finished := producersDone.Load() // read before the pop: see above
				v, ok := r.TryPop()
				if ok {
					got = append(got, v)
					continue
				}
				if finished || d.expired() {
					break
				}
				runtime.Gosched()
			}
			received[i] = got
		})
	}

	var lenErr error
	var samplers sync.WaitGroup
	var samplerMu sync.Mutex
	for range c.samplers {
		samplers.Go(func() {
			for i := 0; !consumersDone.Load(); i++ {
				n, capacity := r.Len(), r.Cap()
				if n < 0 || n > c.capacity || capacity != c.capacity {
					samplerMu.Lock()
					if lenErr == nil {
						lenErr = fmt.Errorf("Len() = %d and Cap() = %d on a ring of capacity %d", n, capacity, c.capacity)
					}
					samplerMu.Unlock()
					return
				}
				if i%64 == 63 {
					runtime.Gosched() // let producers and consumers run on two cores
				}
			}
		})
	}

	producers.Wait()
	producersDone.Store(true)
	consumers.Wait()
	consumersDone.Store(true)
	samplers.Wait()

	if err := d.stop(); err != nil {
		return err
	}
	if lenErr != nil {
		return lenErr
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

// drained checks that a ring every value has left reports empty.
func drained(r ring.Ring[int]) error {
	if n := r.Len(); n != 0 {
		return fmt.Errorf("Len() = %d after every value was popped", n)
	}
	if v, ok := r.TryPop(); ok {
		return fmt.Errorf("TryPop() = (%d, true) after every value was popped", v)
	}
	return nil
}

// checkManyProducersConsumers runs eight producers against eight consumers
// on small rings, so that the ring is full and empty often and wraps many
// times.
func checkManyProducersConsumers(f ring.Factory[int], short bool) error {
	n := 4_000
	if short {
		n = 500
	}
	return transferAll(f, []transferCase{
		{capacity: 4, producers: 8, consumers: 8, perProducer: n},
		{capacity: 64, producers: 8, consumers: 8, perProducer: n},
		{capacity: 7, producers: 3, consumers: 5, perProducer: n},
	})
}

// checkChurn runs a few producers and consumers on rings of capacity 1 and
// 2, which are full or empty almost all the time.
func checkChurn(f ring.Factory[int], short bool) error {
	n := 4_000
	if short {
		n = 500
	}
	return transferAll(f, []transferCase{
		{capacity: 1, producers: 4, consumers: 4, perProducer: n},
		{capacity: 2, producers: 4, consumers: 4, perProducer: n},
		{capacity: 1, producers: 1, consumers: 3, perProducer: n},
		{capacity: 2, producers: 3, consumers: 1, perProducer: n},
	})
}

// checkLenBounds samples Len and Cap from two goroutines while producers and
// consumers run.
func checkLenBounds(f ring.Factory[int], short bool) error {
	n := 4_000
	if short {
		n = 500
	}
	return transferAll(f, []transferCase{
		{capacity: 1, producers: 2, consumers: 2, perProducer: n, samplers: 2},
		{capacity: 3, producers: 4, consumers: 4, perProducer: n, samplers: 2},
		{capacity: 64, producers: 4, consumers: 4, perProducer: n, samplers: 2},
	})
}

func transferAll(f ring.Factory[int], cases []transferCase) error {
	var errs []error
	for _, c := range cases {
		if err := transfer(f, c); err != nil {
			errs = append(errs, fmt.Errorf("%v: %w", c, err))
		}
	}
	return errors.Join(errs...)
}
