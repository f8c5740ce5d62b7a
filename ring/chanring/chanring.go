// Package chanring is a [ring.Ring] backend over a buffered Go channel, with
// select-with-default for the try operations: the pattern OpenTelemetry's
// BatchSpanProcessor and Jaeger's BoundedQueue use to shed instead of block.
//
// A failed try costs two relaxed loads in the runtime (chansend and chanrecv
// return early on a full or empty channel without taking the lock); a
// successful one takes the channel's runtime mutex. Values pass through the
// channel buffer, which the runtime clears on receive, so the ring keeps no
// reference to a popped value.
package chanring

import (
	"fmt"

	"github.com/shardedsink/shardedsink/ring"
)

// Ring is a bounded FIFO ring backed by a buffered channel. It is safe for
// concurrent use by any number of goroutines.
type Ring[T any] struct {
	c chan T
}

// New returns an empty ring that holds exactly capacity values. It panics if
// capacity is below 1.
func New[T any](capacity int) *Ring[T] {
	if capacity < 1 {
		panic(fmt.Sprintf("chanring: capacity must be at least 1, got %d", capacity))
	}
	return &Ring[T]{c: make(chan T, capacity)}
}

// Factory returns New(capacity) as a [ring.Ring]; chanring.Factory[T] is a
// [ring.Factory].
func Factory[T any](capacity int) ring.Ring[T] { return New[T](capacity) }

// TryPush appends v and reports true, or reports false and leaves the ring
// unchanged when it is full. It does not allocate.
func (r *Ring[T]) TryPush(v T) bool {
	select {
	case r.c <- v:
		return true
	default:
		return false
	}
}

// TryPop removes and returns the oldest value, or returns the zero value and
// false when the ring is empty.
func (r *Ring[T]) TryPop() (T, bool) {
	select {
	case v := <-r.c:
		return v, true
	default:
		var zero T
		return zero, false
	}
}

// Len returns the number of values in the channel buffer.
func (r *Ring[T]) Len() int { return len(r.c) }

// Cap returns the capacity the ring was created with.
func (r *Ring[T]) Cap() int { return cap(r.c) }
