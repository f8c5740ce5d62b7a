package sink

import (
	"context"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/shardedsink/shardedsink/internal/layout"
)

// waitQueue holds the PushWait calls parked for room in one shard, in the
// order they parked, and counts those that waited out and the pushes
// dropped once Shutdown had begun. Only PushWait and the drain workers'
// wake-ups (when Sink.waiting is above zero) touch it, and a Push only
// after Shutdown has begun. One per shard, each on cache lines of its own.
type waitQueue struct {
	waitFields
	_ [layout.CacheLine - unsafe.Sizeof(waitFields{})%layout.CacheLine]byte
}

// waitFields are waitQueue's fields, apart so that its padding follows
// their size on every architecture.
type waitFields struct {
	mu   sync.Mutex
	list parkList // guarded by mu
	// n is list.len(), written under mu and loaded without it, so that a
	// wake-up skips a shard where nobody waits without taking its lock.
	// A plain int32 used through sync/atomic's functions.
	n int32
	// waitedOut counts the PushWait calls on this shard whose ctx ended
	// before they found room (each is counted in the shard's Dropped as
	// well, after it). Used only through sync/atomic's functions.
	_         [0]atomic.Uint64
	waitedOut uint64
	// afterShutdown counts the pushes into this shard (Push or PushWait)
	// dropped once Shutdown had begun, counted in Dropped as well, after
	// it. Written only then, when nobody parks here any more; it lives
	// here so that Stats finds it on a line it loads anyway. Used only
	// through sync/atomic's functions.
	afterShutdown uint64
}

// budgetOf returns the shard's byte budget, or nil.
func (sh *shard[T]) budgetOf() *budget[T] {
	if sh.slow == nil {
		return nil
	}
	return sh.slow.budget
}

// PushWait pushes v without a handle, waiting for room if need be. It
// first does what [Sink.Push] does, but counts nothing: its home ring, then
// the next shard's (every other shard's, in a CPU's group); when none has
// room it waits for room in its home shard exactly as [Handle.PushWait]
// does, with the same results. Use it for the values that are worth a
// bounded wait rather than a drop (an error record, an audit event); Push
// stays the push of choice for the rest, and is unchanged by PushWait.
func (s *Sink[T]) PushWait(ctx context.Context, v T) error {
	s.mustBeMade()
	mustHaveCtx("PushWait", ctx)
	i := s.home()
	sh := &s.shards[i]
	if sh.ring.TryPush(v) {
		if sh.isSleeping() {
			sh.wake()
		}
		return nil
	}
	if s.grouped {
		if s.tryAround(i, v) {
			return nil
		}
	} else if next := s.handles[i].next.sh; next != sh && next.ring.TryPush(v) {
		if next.isSleeping() {
			next.wake()
		}
		return nil
	}
	return s.pushWait(ctx, i, v)
}

// pushWait is the wait of a PushWait whose push shard i refused.
//
// The wait pairs with the drain workers as Handle.Push pairs with a
// sleeping worker (Dekker's pattern): the caller joins the queue and raises
// s.waiting, then tries the ring once more; a worker frees room (its pops,
// or its give-back of bytes once a Drain call returns) and then loads
// s.waiting. Go's atomics are sequentially consistent, so either the
// retry sees the room, or the worker sees the caller and wakes it. The
// caller was in the queue before it raised the count, so a worker that
// sees the count finds it under the queue's mutex.
//
// A wake-up is room for this caller: one that leaves without using it
// (its ctx ended as it was woken) hands it on to the next waiter, so no
// waiter is left parked beside room that nobody will free again.
func (s *Sink[T]) pushWait(ctx context.Context, i int, v T) error {
	sh := &s.shards[i]
	if s.isClosing() {
		s.countShutdownDrop(sh)
		return ErrShutdown
	}
	var size int64
	if b := sh.budgetOf(); b != nil {
		size = sizeOf(b.sizeOf, v)
		if size > b.share {
			// It goes in only alone, into an empty shard: TryPush just
			// found the shard holding something, and waiting for it to
			// empty could last for ever.
			sh.countForBytes()
			return ErrValueTooLarge
		}
	}
	q := &s.waits[i]
	if err := ctx.Err(); err != nil {
		s.countWaitedOut(sh, q)
		return err
	}
	w := newParked(size)
	woken := false
	for {
		// A caller woken but beaten to the room by another push goes back
		// to the front: it has waited longest.
		s.enqueue(q, w, woken)
		if sh.ring.TryPush(v) {
			s.dequeue(q, i, w, false)
			if sh.isSleeping() {
				sh.wake()
			}
			return nil
		}
		if hook := s.cfg.exp.parkHook; hook != nil {
			hook(i)
		}
		if s.spill != nil {
			s.spill.wake() // see spillTier.sleeping
		}
		select {
		case <-w.ready:
			woken = true // the worker took w out of the queue
		case <-ctx.Done():
			s.dequeue(q, i, w, true)
			s.countWaitedOut(sh, q)
			return ctx.Err()
		case <-s.stop:
			// Every waiter sees stop; none needs a wake-up handed on.
			s.dequeue(q, i, w, false)
			s.countShutdownDrop(sh)
			return ErrShutdown
		}
	}
}

// enqueue parks w in q, at the back or (a caller woken before) the front,
// and then raises s.waiting (see pushWait for the order).
func (s *Sink[T]) enqueue(q *waitQueue, w *parked, front bool) {
	q.mu.Lock()
	q.list.add(w, front)
	atomic.StoreInt32(&q.n, int32(q.list.len()))
	q.mu.Unlock()
	atomic.AddInt32(&s.waiting, 1)
}

// dequeue takes w out of shard i's queue q when it is still there. When a
// worker took it out first, a wake-up is in w.ready (sent under q.mu, which
// this call took after it): with handOn it passes that room on to the next
// waiters of the shard.
func (s *Sink[T]) dequeue(q *waitQueue, i int, w *parked, handOn bool) {
	q.mu.Lock()
	if q.list.remove(w) {
		atomic.StoreInt32(&q.n, int32(q.list.len()))
		q.mu.Unlock()
		atomic.AddInt32(&s.waiting, -1)
		return
	}
	q.mu.Unlock()
	if handOn {
		s.wakeShard(i)
	}
}

// countWaitedOut records a PushWait whose ctx ended first.
func (s *Sink[T]) countWaitedOut(sh *shard[T], q *waitQueue) {
	atomic.AddUint64(&q.waitedOut, 1)
}

// wakeWaitersIfAny is the drain workers' side of PushWait, called once per
// batch after room was freed: one atomic load when nobody waits.
func (s *Sink[T]) wakeWaitersIfAny() {
	if atomic.LoadInt32(&s.waiting) != 0 {
		s.wakeWaiters()
	}
}

// wakeWaiters wakes, in every shard where callers wait, as many of them
// as the shard has room for now.
func (s *Sink[T]) wakeWaiters() {
	for i := range s.waits {
		s.wakeShard(i)
	}
}

// wakeShard wakes the oldest waiters of shard i that its room fits: one
// per free slot of the ring and, with MaxQueuedBytes, while their sizes
// fit in what the share has left (a value of size 0 always fits, as the
// budget admits it whatever the shard holds). Each is taken out of the
// queue, s.waiting lowered for it, and sent its wake-up. Room is a
// snapshot: a woken caller that finds it taken parks again, at the front.
func (s *Sink[T]) wakeShard(i int) {
	q := &s.waits[i]
	if atomic.LoadInt32(&q.n) == 0 {
		return
	}
	sh := &s.shards[i]
	room := sh.ring.Cap() - sh.ring.Len()
	if room <= 0 {
		return
	}
	bytes := int64(-1) // no bound
	if b := sh.budgetOf(); b != nil {
		bytes = max(b.share-atomic.LoadInt64(b.held), 0)
	}
	q.mu.Lock()
	if k := q.list.wakeOldest(room, bytes); k > 0 {
		atomic.StoreInt32(&q.n, int32(q.list.len()))
		atomic.AddInt32(&s.waiting, -int32(k))
	}
	q.mu.Unlock()
}
