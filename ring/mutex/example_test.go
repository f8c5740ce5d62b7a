package mutex_test

import (
	"fmt"

	"github.com/shardedsink/shardedsink/ring/mutex"
)

func ExampleNew() {
	r := mutex.New[string](2)
	fmt.Println(r.TryPush("first"), r.TryPush("second"), r.TryPush("third")) // the third finds it full
	v, ok := r.TryPop()
	fmt.Println(v, ok, r.Len(), r.Cap())
	// Output:
	// true true false
	// first true 1 2
}

// Factory returns the ring as a ring.Ring, for the sink and the channel, which
// take a ring.Factory.
func ExampleFactory() {
	r := mutex.Factory[int](3)
	_, ok := r.TryPop()
	fmt.Println(r.Cap(), ok)
	// Output: 3 false
}
