package natssink

import "sync/atomic"

// The slots are allocated in chunks of chunkLen, each when the first of
// its slots is first taken, so that a sink with a large MaxInFlight costs
// memory for the slots its load has needed, not for MaxInFlight.
const (
	chunkBits = 10
	chunkLen  = 1 << chunkBits
)

// chunk is chunkLen slots. Their due times and sequence numbers are
// arrays of their own, which the retry goroutine and Flush scan without
// touching the rest of the slots.
type chunk struct {
	due   [chunkLen]atomic.Int64
	seq   [chunkLen]atomic.Uint64
	slots [chunkLen]slot
}

// slotTable is the sink's MaxInFlight slots, by index.
type slotTable struct {
	chunks []atomic.Pointer[chunk] // nil until a slot of it is taken
	n      int                     // MaxInFlight
}

func newSlotTable(n int) slotTable {
	return slotTable{chunks: make([]atomic.Pointer[chunk], (n+chunkLen-1)/chunkLen), n: n}
}

// get returns slot idx, or nil if it was never taken (idx < n).
func (t *slotTable) get(idx int32) *slot {
	c := t.chunks[idx>>chunkBits].Load()
	if c == nil {
		return nil
	}
	return &c.slots[idx&(chunkLen-1)]
}

// ensure allocates the chunk of slot idx if it is not yet. Called by the
// pool under its lock, so chunks are allocated once.
func (t *slotTable) ensure(idx int32, inbox, stream string) {
	cp := &t.chunks[idx>>chunkBits]
	if cp.Load() != nil {
		return
	}
	c := new(chunk)
	for i := range c.slots {
		c.slots[i].init(inbox, stream, &c.seq[i], &c.due[i])
	}
	cp.Store(c)
}

// drop frees chunk ci, whose slots are all free (pool.shrink).
func (t *slotTable) drop(ci int) { t.chunks[ci].Store(nil) }

// chunksInUse returns how many chunks are allocated.
func (t *slotTable) chunksInUse() int {
	n := 0
	for ci := range t.chunks {
		if t.chunks[ci].Load() != nil {
			n++
		}
	}
	return n
}

// each calls f with every slot below highWater whose due time has come (due in
// (0, now]), chunk by chunk.
func (t *slotTable) eachDue(highWater int32, now int64, f func(idx int32, sl *slot)) {
	for ci := 0; ci < len(t.chunks) && int32(ci)<<chunkBits < highWater; ci++ {
		c := t.chunks[ci].Load()
		if c == nil {
			continue
		}
		for i := range c.due {
			if d := c.due[i].Load(); d != 0 && d <= now {
				f(int32(ci<<chunkBits+i), &c.slots[i])
			}
		}
	}
}

// anyAtOrBelow reports whether a slot below highWater holds a value whose
// sequence number is in [1, last].
func (t *slotTable) anyAtOrBelow(highWater int32, last uint64) bool {
	for ci := 0; ci < len(t.chunks) && int32(ci)<<chunkBits < highWater; ci++ {
		c := t.chunks[ci].Load()
		if c == nil {
			continue
		}
		for i := range c.seq {
			if q := c.seq[i].Load(); q != 0 && q <= last {
				return true
			}
		}
	}
	return false
}

// each calls f with every slot allocated.
func (t *slotTable) each(f func(idx int32, sl *slot)) {
	for ci := range t.chunks {
		c := t.chunks[ci].Load()
		if c == nil {
			continue
		}
		for i := range c.slots {
			f(int32(ci<<chunkBits+i), &c.slots[i])
		}
	}
}
