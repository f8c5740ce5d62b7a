// Package mutex is a [ring.Ring] backend built from a sync.Mutex and a
// circular slice: the simplest correct ring, and the baseline that the
// lock-free backends must beat.
//
// Every operation, successful or not, takes the lock, so all producers and
// consumers serialise on one cache line. On two cores a short critical section
// under sync.Mutex is hard to beat; under heavy contention the lock convoys
// (a preempted holder stalls everyone) and the tail latency grows to
// milliseconds. The bench commands measure both.
package mutex

import (
	"fmt"
	"sync"

	"github.com/shardedsink/shardedsink/ring"
)

// Ring is a bounded FIFO ring guarded by one mutex. It is safe for concurrent
// use by any number of goroutines. A Ring must not be copied after first use.
type Ring[T any] struct {
	mu    sync.Mutex
	buf   []T
	head  int // index of the oldest value
	count int // number of values held
}

// New returns an empty ring that holds exactly capacity values. It panics if
// capacity is below 1.
func New[T any](capacity int) *Ring[T] {
	if capacity < 1 {
		panic(fmt.Sprintf("mutex: capacity must be at least 1, got %d", capacity))
	}
	return &Ring[T]{buf: make([]T, capacity)}
}

// Factory returns New(capacity) as a [ring.Ring]; mutex.Factory[T] is a
// [ring.Factory].
func Factory[T any](capacity int) ring.Ring[T] { return New[T](capacity) }

// TryPush appends v and reports true, or reports false and leaves the ring
// unchanged when it is full. It does not allocate.
func (r *Ring[T]) TryPush(v T) bool {
	r.mu.Lock()
	if r.count == len(r.buf) {
		r.mu.Unlock()
		return false
	}
	i := r.head + r.count
	if i >= len(r.buf) {
		i -= len(r.buf)
	}
	r.buf[i] = v
	r.count++
	r.mu.Unlock()
	return true
}

// TryPop removes and returns the oldest value, or returns the zero value and
// false when the ring is empty. The slot is zeroed so that the ring keeps no
// reference to the value.
func (r *Ring[T]) TryPop() (T, bool) {
	var zero T
	r.mu.Lock()
	if r.count == 0 {
		r.mu.Unlock()
		return zero, false
	}
	v := r.buf[r.head]
	r.buf[r.head] = zero
	r.head++
	if r.head == len(r.buf) {
		r.head = 0
	}
	r.count--
	r.mu.Unlock()
	return v, true
}

// Len returns the number of values in the ring.
func (r *Ring[T]) Len() int {
	r.mu.Lock()
	n := r.count
	r.mu.Unlock()
	return n
}

// Cap returns the capacity the ring was created with.
func (r *Ring[T]) Cap() int { return len(r.buf) }
