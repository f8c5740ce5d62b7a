package ringtest_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/ringtest"
)

// boxRing is a ring of your own: here the simplest correct one, a mutex
// around a circular slice. Whatever the implementation, the kit holds it to
// the contract in package ring's documentation.
type boxRing[T any] struct {
	mu         sync.Mutex
	buf        []T
	head, size int
}

// newBoxRing is the ring's ring.Factory. Like every backend, it panics on a
// capacity below 1, naming its package and the value.
func newBoxRing[T any](capacity int) ring.Ring[T] {
	if capacity < 1 {
		panic(fmt.Sprintf("boxring: capacity must be at least 1, got %d", capacity))
	}
	return &boxRing[T]{buf: make([]T, capacity)}
}

func (r *boxRing[T]) TryPush(v T) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.size == len(r.buf) {
		return false
	}
	r.buf[(r.head+r.size)%len(r.buf)] = v
	r.size++
	return true
}

func (r *boxRing[T]) TryPop() (T, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var zero T
	if r.size == 0 {
		return zero, false
	}
	v := r.buf[r.head]
	r.buf[r.head] = zero // release the popped value to the garbage collector
	r.head = (r.head + 1) % len(r.buf)
	r.size--
	return v, true
}

func (r *boxRing[T]) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.size
}

func (r *boxRing[T]) Cap() int { return len(r.buf) }

// conformance is what the ring's own _test.go file runs, as
//
//	func TestConformance(t *testing.T) { conformance(t) }
//
// with, beside it, a fuzz target:
//
//	func FuzzRing(f *testing.F) { ringtest.Fuzz(f, newBoxRing[int]) }
func conformance(t *testing.T) {
	ringtest.Run(t, newBoxRing[int])                       // the contract, under concurrency too
	ringtest.RunReleases(t, newBoxRing[*[64]byte])         // popped values are not kept reachable
	ringtest.RunBadCapacity(t, newBoxRing[int], "boxring") // capacity below 1 panics, naming the value
	ringtest.RunNoAllocs(t, newBoxRing[int])               // no allocation per operation
}

// The kit checks a ring you write yourself. The conformance function above
// shows the test file; this package's own tests run it on boxRing.
func Example() {
	var f ring.Factory[string] = newBoxRing[string]
	r := f(2)
	fmt.Println(r.TryPush("a"), r.TryPush("b"), r.TryPush("c"))
	v, ok := r.TryPop()
	fmt.Println(v, ok, r.Len(), r.Cap())
	// Output:
	// true true false
	// a true 1 2
}
