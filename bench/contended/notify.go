package main

import (
	"sync/atomic"

	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/vyukov"
)

// The sharded-notify row reproduces, in Go, the mechanism the original
// blames for thingbuf's collapse: thingbuf's mpsc try_send, after it has
// published the value, notifies the receiver's WaitCell with one or two
// atomic read-modify-writes on that cell, whether or not the receiver is
// waiting. notifyRing does the same on top of the vyukov ring: a successful
// TryPush also adds one to the shard's wake word, a counter on its own cache
// lines that the shard's consumer reads on every TryPop, as a receiver reads
// its wait cell. Everything else (the sink, its workers, the handles, the
// sizing) is the sharded-vyukov row's.

// cacheLinePad is twice the 64-byte line, as crossbeam's CachePadded on
// x86-64 (the adjacent-line prefetcher pulls pairs of lines).
const cacheLinePad = 128

// notifyRing is a vyukov ring whose successful pushes notify its consumer.
type notifyRing[T any] struct {
	inner *vyukov.Ring[T] // concrete, so that the wrapper adds no dynamic call, only the notify
	_     [cacheLinePad]byte
	// wake is the shard's wake word: every successful push adds one
	// (atomic.AddUint64, a locked read-modify-write); the consumer loads it
	// on every TryPop.
	wake uint64
	_    [cacheLinePad - 8]byte
	// seen is the consumer's side: the last wake count it read.
	seen uint64
	_    [cacheLinePad - 8]byte
}

func (r *notifyRing[T]) TryPush(v T) bool {
	if !r.inner.TryPush(v) {
		return false
	}
	atomic.AddUint64(&r.wake, 1) // thingbuf's notify: on every push, waiter or not
	return true
}

func (r *notifyRing[T]) TryPop() (T, bool) {
	atomic.StoreUint64(&r.seen, atomic.LoadUint64(&r.wake)) // the consumer reads its wait cell
	return r.inner.TryPop()
}

func (r *notifyRing[T]) Len() int { return r.inner.Len() }
func (r *notifyRing[T]) Cap() int { return r.inner.Cap() }

// notifyFactory makes vyukov rings that notify.
func notifyFactory[T any](capacity int) ring.Ring[T] {
	return &notifyRing[T]{inner: vyukov.New[T](capacity)}
}

// notifyImpl is the sharded-vyukov row with notifying rings.
func notifyImpl[T any]() *impl[T] {
	im := shardedImpl("sharded-notify", notifyFactory[T])
	im.backend = nil // its shed path is sharded-vyukov's: a full ring notifies nobody
	im.caveat = "sharded-vyukov whose successful TryPush also does atomic.AddUint64 on a per-shard wake word on its own " +
		"cache lines, which the shard's consumer loads on every pop: thingbuf's try_send notifying the receiver's " +
		"WaitCell on every send, waiter or not"
	return im
}
