package natssink

import (
	"sync"
	"sync/atomic"
)

// pool hands out the free slots and bounds the values in flight twice: in
// number (the slots, MaxInFlight) and in payload bytes (MaxInFlightBytes).
//
// The free slots are a LIFO stack: a slot freed is the next one taken, so
// the slots in use stay among the lowest indices and a sink whose load
// never needed many slots touches, and scans, only those (highWater). A sink's
// slots array is allocated whole by New but its pages are touched only
// as slots are first used.
type pool struct {
	mu   sync.Mutex
	free []int32 // the free slots' indices; the top is the last

	// room has one buffered token: a put (or a waiter that took a slot
	// and left room behind it) sends one, without waiting, so that a
	// worker waiting for a slot or for bytes looks again.
	room chan struct{}

	waiters atomic.Int32 // workers waiting for room: put signals only then

	maxBytes  int64
	bytes     atomic.Int64    // the payload bytes of the values in slots
	highWater atomic.Int32    // every slot at this index or above has never been taken
	ensure    func(idx int32) // allocates slot idx's chunk, under mu, on its first take
}

func newPool(slots int, maxBytes int64, ensure func(int32)) *pool {
	p := &pool{free: make([]int32, slots), room: make(chan struct{}, 1), maxBytes: maxBytes, ensure: ensure}
	for i := range p.free {
		p.free[i] = int32(slots - 1 - i) // slot 0 on top
	}
	return p
}

// take returns a free slot, or false when none is free or the values in
// flight hold MaxInFlightBytes or more. A value's bytes are counted once
// it is encoded (add), so the bound may be passed by one value per drain
// worker.
func (p *pool) take() (int32, bool) {
	if p.bytes.Load() >= p.maxBytes {
		return 0, false
	}
	p.mu.Lock()
	n := len(p.free)
	if n == 0 {
		p.mu.Unlock()
		return 0, false
	}
	idx := p.free[n-1]
	p.free = p.free[:n-1]
	if idx >= p.highWater.Load() {
		p.ensure(idx)
		p.highWater.Store(idx + 1) // under mu: only here
	}
	p.mu.Unlock()
	return idx, true
}

// put frees slot idx and gives back the bytes its value held.
func (p *pool) put(idx int32, bytes int) {
	p.bytes.Add(-int64(bytes))
	p.mu.Lock()
	p.free = append(p.free, idx) // never grows: idx was taken
	p.mu.Unlock()
	// A waiter counts itself before it looks (take), and this looks after
	// the push: either it finds the slot or this sees it and signals.
	if p.waiters.Load() > 0 {
		p.signal()
	}
}

// signal tells a waiting worker to look again, without waiting.
func (p *pool) signal() {
	select {
	case p.room <- struct{}{}:
	default:
	}
}

// shrink gives back the chunks of slots that an outage (or a burst) needed
// and steady traffic does not: it rebuilds the free list lowest index
// first, so that the values in flight gather in the lowest chunks, and
// drops every chunk above the highest slot in use (drop frees chunk ci of
// the slot table); those slots count as never taken again, and a take of
// one allocates its chunk anew. It costs one pass over the MaxInFlight
// indices under the pool's lock (about a millisecond at the default), so
// the retry goroutine calls it once per shrinkEvery.
func (p *pool) shrink(drop func(ci int)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	hw := p.highWater.Load()
	if hw <= chunkLen {
		return
	}
	free := make([]bool, hw)
	for _, idx := range p.free {
		if idx < hw {
			free[idx] = true
		}
	}
	top := int32(-1) // the highest slot in use
	for i := hw - 1; i >= 0; i-- {
		if !free[i] {
			top = i
			break
		}
	}
	n := int32(cap(p.free))
	p.free = p.free[:0]
	for i := n - 1; i >= 0; i-- {
		if i >= hw || free[i] {
			p.free = append(p.free, i)
		}
	}
	keep := max((top+chunkLen)>>chunkBits, 1) // chunks that stay: up to top's, and at least the first
	for ci := keep; ci < (hw+chunkLen-1)>>chunkBits; ci++ {
		drop(int(ci))
	}
	p.highWater.Store(min(hw, keep<<chunkBits))
}
