package ringtest

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/shardedsink/shardedsink/ring"
)

// faults lists the ways a faultyRing breaks the ring contract. The zero
// value breaks nothing: a faultyRing without faults is a correct mutex ring,
// the kit's reference.
type faults struct {
	lifo         bool // pops the newest value instead of the oldest
	overwrite    bool // a push into a full ring replaces the oldest value and succeeds
	extraSlot    bool // holds one value more than its capacity
	loseEvery    int  // every n-th successful push drops its value
	repeatEvery  int  // every n-th successful pop leaves its value in the ring
	zeroWhenFull bool // Len reports 0 when full (a wrap-around bug)
	keepPopped   bool // leaves popped values in their slots
	keepRejected bool // remembers the last value it refused
	giveUp       bool // TryPush and TryPop fail when another goroutine holds the lock
	tornLen      bool // Len subtracts two counters read at different times
	allocEvery   int  // every n-th TryPush or TryPop allocates
}

// faultyRing is a mutex ring with the given faults. Its faults that show only
// under concurrency widen their window with runtime.Gosched, so the kit's
// concurrent checks meet them within a short run.
type faultyRing[T any] struct {
	faults   faults
	mu       sync.Mutex
	buf      []T
	head     int
	count    int
	capacity int
	pushes   int
	pops     int
	calls    int
	rejected T
	spill    []T // where allocEvery's allocations go

	pushed, popped atomic.Int64 // for tornLen
}

func faulty[T any](fs faults) ring.Factory[T] {
	return func(capacity int) ring.Ring[T] {
		slots := capacity
		if fs.extraSlot {
			slots++
		}
		return &faultyRing[T]{faults: fs, buf: make([]T, slots), capacity: capacity}
	}
}

func (r *faultyRing[T]) lock() bool {
	if !r.faults.giveUp {
		r.mu.Lock()
	} else {
		if !r.mu.TryLock() {
			return false // lost a race: reported as full or empty
		}
		runtime.Gosched() // hold the lock a while, so that others lose races
	}
	if r.calls++; r.faults.allocEvery > 0 && r.calls%r.faults.allocEvery == 0 {
		r.spill = make([]T, 1)
	}
	return true
}

func (r *faultyRing[T]) TryPush(v T) bool {
	if !r.lock() {
		return false
	}
	defer r.mu.Unlock()
	if r.count == len(r.buf) {
		if r.faults.overwrite {
			r.buf[r.head] = v
			r.head = (r.head + 1) % len(r.buf)
			return true
		}
		if r.faults.keepRejected {
			r.rejected = v
		}
		return false
	}
	r.pushes++
	if r.faults.loseEvery > 0 && r.pushes%r.faults.loseEvery == 0 {
		return true
	}
	r.buf[(r.head+r.count)%len(r.buf)] = v
	r.count++
	r.pushed.Add(1)
	return true
}

func (r *faultyRing[T]) TryPop() (T, bool) {
	var zero T
	if !r.lock() {
		return zero, false
	}
	defer r.mu.Unlock()
	if r.count == 0 {
		return zero, false
	}
	r.pops++
	if r.faults.repeatEvery > 0 && r.pops%r.faults.repeatEvery == 0 {
		return r.buf[r.head], true
	}
	i := r.head
	if r.faults.lifo {
		i = (r.head + r.count - 1) % len(r.buf)
	} else {
		r.head = (r.head + 1) % len(r.buf)
	}
	v := r.buf[i]
	if !r.faults.keepPopped {
		r.buf[i] = zero
	}
	r.count--
	r.popped.Add(1)
	return v, true
}

func (r *faultyRing[T]) Len() int {
	if r.faults.tornLen {
		pushed := r.pushed.Load()
		runtime.Gosched() // pops may overtake the pushes read above
		return int(pushed - r.popped.Load())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.count == r.capacity && r.faults.zeroWhenFull {
		return 0
	}
	return r.count
}

func (r *faultyRing[T]) Cap() int { return r.capacity }

// unpublishedRing claims a slot under the lock, writes the value after
// releasing it, and publishes the slot in a second critical section, as a
// lock-free ring claims a slot and then publishes it. Its fault: TryPop gives
// up with "empty" when the oldest slot is claimed but not yet published,
// even if later slots are published, instead of waiting for it. A naive
// Vyukov port makes this mistake; sequentially it is correct.
type unpublishedRing struct {
	mu        sync.Mutex
	buf       []int
	published []bool
	head      int
	claimed   int // slots claimed by pushes, published or not
	capacity  int
}

func newUnpublished(capacity int) ring.Ring[int] {
	return &unpublishedRing{buf: make([]int, capacity), published: make([]bool, capacity), capacity: capacity}
}

func (r *unpublishedRing) TryPush(v int) bool {
	r.mu.Lock()
	if r.claimed == r.capacity {
		r.mu.Unlock()
		return false
	}
	i := (r.head + r.claimed) % r.capacity
	r.claimed++
	r.mu.Unlock()
	runtime.Gosched() // between claim and publish, as a preempted producer
	r.mu.Lock()
	r.buf[i] = v
	r.published[i] = true
	r.mu.Unlock()
	return true
}

func (r *unpublishedRing) TryPop() (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.claimed == 0 || !r.published[r.head] {
		return 0, false // the fault: gives up on a slot that is being written
	}
	v := r.buf[r.head]
	r.buf[r.head] = 0
	r.published[r.head] = false
	r.head = (r.head + 1) % r.capacity
	r.claimed--
	return v, true
}

func (r *unpublishedRing) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.claimed
}

func (r *unpublishedRing) Cap() int { return r.capacity }
