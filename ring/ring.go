// Package ring defines the bounded ring that the sink and the mpmc channel are
// built on, so that one worker and lifecycle implementation can run over any
// backend: [vyukov] (the default), [mutex], [chanring], and, for benchmarks
// only, zenq.
//
// # The contract every backend keeps
//
//   - Exact capacity. Cap returns exactly the capacity passed to the
//     constructor; the ring accepts exactly that many values before TryPush
//     fails. A capacity below 1 panics with a message that starts with the
//     package name and shows the value.
//   - FIFO. Values leave in the order in which their TryPush calls took effect.
//     Values pushed by one goroutine leave in the order that goroutine pushed
//     them.
//   - No spurious failure. TryPush returns false only when the ring really was
//     full at some instant during the call, and TryPop returns ok == false only
//     when it really was empty. Losing a race to another goroutine is never
//     reported as full or empty: a sink counts every failed TryPush as a drop,
//     so a spurious failure would be a lost value.
//   - A failed TryPush leaves the ring unchanged, and the value stays with the
//     caller.
//   - Popped slots are zeroed, so the ring keeps nothing reachable that it has
//     handed out and the garbage collector can free it.
//   - Safe for any number of concurrent producers and consumers.
//   - Len is a snapshot: 0 <= Len() <= Cap() always holds, but under
//     concurrency the value may be stale by the time it is read.
//
// The conformance kit in package ringtest checks all of this for any
// [Factory].
//
// [vyukov]: https://pkg.go.dev/github.com/shardedsink/shardedsink/ring/vyukov
// [mutex]: https://pkg.go.dev/github.com/shardedsink/shardedsink/ring/mutex
// [chanring]: https://pkg.go.dev/github.com/shardedsink/shardedsink/ring/chanring
package ring

// Ring is a bounded multi-producer multi-consumer FIFO queue with
// non-blocking operations. See the package documentation for the contract
// that every implementation keeps.
type Ring[T any] interface {
	// TryPush appends v and reports true, or reports false and leaves the
	// ring unchanged when the ring is full.
	TryPush(v T) bool
	// TryPop removes and returns the oldest value, or returns the zero value
	// and false when the ring is empty.
	TryPop() (v T, ok bool)
	// Len returns the number of values in the ring, between 0 and Cap. Under
	// concurrency it is a snapshot.
	Len() int
	// Cap returns the capacity the ring was created with.
	Cap() int
}

// Factory creates a ring of the given capacity. Every backend package exports
// a generic function named Factory with this signature, so that
// vyukov.Factory[Event] is a Factory[Event]. A factory panics when capacity is
// below 1.
type Factory[T any] func(capacity int) Ring[T]
