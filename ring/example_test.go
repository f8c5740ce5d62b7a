package ring_test

import (
	"fmt"

	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/chanring"
	"github.com/shardedsink/shardedsink/ring/mutex"
	"github.com/shardedsink/shardedsink/ring/vyukov"
)

// Every backend keeps the same contract: exact capacity, FIFO order, and a
// TryPush that fails only on a full ring, leaving it unchanged.
func Example() {
	backends := []struct {
		name    string
		factory ring.Factory[string]
	}{
		{"vyukov", vyukov.Factory[string]},
		{"mutex", mutex.Factory[string]},
		{"chanring", chanring.Factory[string]},
	}
	for _, b := range backends {
		r := b.factory(2)
		fmt.Print(b.name, ": ")
		for _, v := range []string{"a", "b", "c"} {
			fmt.Print("push ", v, " ", r.TryPush(v), ", ")
		}
		fmt.Print("len ", r.Len(), "/", r.Cap(), ", pop")
		for {
			v, ok := r.TryPop()
			if !ok {
				break
			}
			fmt.Print(" ", v)
		}
		fmt.Println()
	}
	// Output:
	// vyukov: push a true, push b true, push c false, len 2/2, pop a b
	// mutex: push a true, push b true, push c false, len 2/2, pop a b
	// chanring: push a true, push b true, push c false, len 2/2, pop a b
}

// newQueue stands for a library function that lets its caller choose the
// backend: it takes a ring.Factory rather than a ring.
func newQueue[T any](f ring.Factory[T], capacity int) ring.Ring[T] {
	if f == nil {
		f = vyukov.Factory[T] // the default
	}
	return f(capacity)
}

// A Factory is how a caller picks the backend: each backend package exports a
// generic Factory function of this type.
func ExampleFactory() {
	q := newQueue(mutex.Factory[int], 8)
	q.TryPush(42)
	v, ok := q.TryPop()
	fmt.Println(v, ok, q.Cap())

	d := newQueue[int](nil, 4)
	fmt.Println(d.Cap())
	// Output:
	// 42 true 8
	// 4
}
