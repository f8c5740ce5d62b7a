package vyukov_test

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/shardedsink/shardedsink/ring/vyukov"
)

func ExampleNew() {
	r := vyukov.New[string](2)
	fmt.Println(r.TryPush("first"), r.TryPush("second"), r.TryPush("third")) // the third finds it full
	v, ok := r.TryPop()
	fmt.Println(v, ok, r.Len())
	// Output:
	// true true false
	// first true 1
}

// Any number of producers and consumers may share one ring. A failed TryPush
// means the ring was full (never a lost race), so a producer that must not
// lose a value retries; here four producers move 1,000 values each through a
// ring of 16 to one consumer.
func ExampleNew_concurrent() {
	r := vyukov.New[int](16)
	const producers, each = 4, 1000
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				for !r.TryPush(p*each + i) {
					runtime.Gosched() // full: the consumer is behind
				}
			}
		})
	}
	sum, n := 0, 0
	for n < producers*each {
		if v, ok := r.TryPop(); ok {
			sum += v
			n++
		} else {
			runtime.Gosched() // empty: the producers are behind
		}
	}
	wg.Wait()
	fmt.Println(n, sum)
	// Output: 4000 7998000
}

// ForcePush never fails on a full ring: it displaces the oldest value and
// hands it back, so a value is either popped later or returned here.
func ExampleRing_ForcePush() {
	r := vyukov.New[int](2)
	r.TryPush(1)
	r.TryPush(2)
	old, displaced, ok := r.ForcePush(3)
	fmt.Println(old, displaced, ok)
	a, _ := r.TryPop()
	b, _ := r.TryPop()
	fmt.Println(a, b)
	// Output:
	// 1 true true
	// 2 3
}

// After Close every push fails, while the values already in the ring can
// still be popped.
func ExampleRing_Close() {
	r := vyukov.New[string](4)
	r.TryPush("buffered")
	fmt.Println(r.Close(), r.Close()) // only the first call closes
	fmt.Println(r.TryPush("late"), r.IsClosed())
	v, ok := r.TryPop()
	fmt.Println(v, ok)
	// Output:
	// true false
	// false true
	// buffered true
}

// Factory returns the ring as a ring.Ring, for the sink and the channel, which
// take a ring.Factory.
func ExampleFactory() {
	r := vyukov.Factory[int](3)
	fmt.Println(r.Cap(), r.Len())
	// Output: 3 0
}
