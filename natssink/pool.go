package natssink

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// pool hands out the free slots and bounds the values in flight twice: in
// number (the slots, MaxInFlight) and in payload bytes (MaxInFlightBytes).
//
// A take hands out the lowest free slot, so the slots in use stay among
// the lowest indices: a sink whose load never needed many slots touches,
// and scans, only those (highWater), and once an outage's backlog clears
// the values in flight gather in the lowest chunks again, which lets
// shrink give the others back. (A stack of free slots, freed first taken
// first, kept handing steady traffic the slot an outage's last ack had
// freed, high up, and shrink never found the chunks above it free.) A
// sink's slots array is allocated whole by New but its pages are touched
// only as slots are first used.
type pool struct {
	mu sync.Mutex
	// free has bit i%64 of word i/64 set while slot i is free; every word
	// below lowest has none set. Under mu.
	free   []uint64
	lowest int

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
	p := &pool{free: make([]uint64, (slots+63)/64), room: make(chan struct{}, 1), maxBytes: maxBytes, ensure: ensure}
	for i := range p.free {
		p.free[i] = ^uint64(0)
	}
	if r := slots % 64; r != 0 {
		p.free[len(p.free)-1] = 1<<r - 1
	}
	return p
}

// take returns the lowest free slot, or false when none is free or the
// values in flight hold MaxInFlightBytes or more. A value's bytes are
// counted once it is encoded (add), so the bound may be passed by one
// value per drain worker. It looks at the words of free from lowest up,
// and moves lowest to the word it takes from: once per word filled, and
// again after a put below it.
func (p *pool) take() (int32, bool) {
	if p.bytes.Load() >= p.maxBytes {
		return 0, false
	}
	p.mu.Lock()
	for ; p.lowest < len(p.free); p.lowest++ {
		if word := p.free[p.lowest]; word != 0 {
			bit := bits.TrailingZeros64(word)
			p.free[p.lowest] = word &^ (1 << bit)
			idx := int32(p.lowest*64 + bit)
			if idx >= p.highWater.Load() {
				p.ensure(idx)
				p.highWater.Store(idx + 1) // under mu: only here
			}
			p.mu.Unlock()
			return idx, true
		}
	}
	p.mu.Unlock()
	return 0, false
}

// put frees slot idx and gives back the bytes its value held.
func (p *pool) put(idx int32, bytes int) {
	p.bytes.Add(-int64(bytes))
	p.mu.Lock()
	w := int(idx / 64)
	p.free[w] |= 1 << (idx % 64)
	p.lowest = min(p.lowest, w)
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
// and steady traffic does not: it drops every chunk above the highest slot
// in use (drop frees chunk ci of the slot table); those slots count as
// never taken again, and a take of one allocates its chunk anew. Since a
// take hands out the lowest free slot, the values in flight after an
// outage gather in the lowest chunks. It looks at the words of free below
// highWater under the pool's lock (at most 4,096 at the default
// MaxInFlight), once per shrinkEvery from the retry goroutine.
func (p *pool) shrink(drop func(ci int)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	hw := p.highWater.Load()
	if hw <= chunkLen {
		return
	}
	top := int32(-1) // the highest slot in use
	for w := (int(hw) - 1) / 64; w >= 0; w-- {
		used := ^p.free[w]
		if end := int(hw) - w*64; end < 64 {
			used &= 1<<end - 1 // slots at or above hw are never taken
		}
		if used != 0 {
			top = int32(w*64 + 63 - bits.LeadingZeros64(used))
			break
		}
	}
	keep := max((top+chunkLen)>>chunkBits, 1) // chunks that stay: up to top's, and at least the first
	for ci := keep; ci < (hw+chunkLen-1)>>chunkBits; ci++ {
		drop(int(ci))
	}
	p.highWater.Store(min(hw, keep<<chunkBits))
}
