package slogsink

import "slices"

// inlineSize is the longest formatted record that travels inside its ring
// slot; a longer one allocates its bytes once. A record of five attributes
// and a time, a level and a message takes about 150 bytes in JSON, 250
// with AddSource.
const inlineSize = 352

// entry is what travels through the sink: the formatted bytes of one
// record, preceded by the drop report that goes in front of it if there is
// one, or the bytes of a drop report alone (marker), in the slot itself
// when they fit. With the ring's sequence number a slot takes 400 bytes on
// 64-bit platforms.
type entry struct {
	big    []byte // the bytes, when longer than inlineSize
	n      int32  // the length of the bytes in inline
	shard  int32
	marker bool
	inline [inlineSize]byte
}

// makeEntry copies report (nil for none) and then p into a new entry of
// shard i.
func makeEntry(report, p []byte, i int, marker bool) entry {
	e := entry{shard: int32(i), marker: marker}
	if n := len(report) + len(p); n <= inlineSize {
		copy(e.inline[copy(e.inline[:], report):], p)
		e.n = int32(n)
	} else {
		e.big = append(append(bigBytes(n), report...), p...)
	}
	return e
}

// append appends p to e's bytes, inline while they fit.
func (e *entry) append(p []byte) {
	if e.big == nil {
		if n := int(e.n) + len(p); n <= inlineSize {
			copy(e.inline[e.n:], p)
			e.n = int32(n)
			return
		}
		e.big = append(bigBytes(int(e.n)+len(p)), e.inline[:e.n]...)
	}
	e.big = append(e.big, p...)
}

// bigBytes allocates the bytes of a record longer than inlineSize, room
// for n: its capacity is the size of the allocation (the size class, or
// whole pages), which heapBytes counts, so that MaxQueuedBytes bounds the
// heap and not only the lengths.
func bigBytes(n int) []byte { return slices.Grow([]byte(nil), n) }

// heapBytes is the sink's SizeOf: the bytes an entry holds beyond its
// slot, which Options.MaxQueuedBytes bounds. A record stored in the slot
// holds none (the slots are bounded already). It is the same for every
// copy of an entry, as the sink requires: it calls it on the push and again
// when the worker takes the entry.
func heapBytes(e entry) int { return cap(e.big) }

func (e *entry) len() int {
	if e.big != nil {
		return len(e.big)
	}
	return int(e.n)
}

// bytes returns the formatted bytes of e.
func (e *entry) bytes() []byte {
	if e.big != nil {
		return e.big
	}
	return e.inline[:e.n]
}

// records returns the number of entries of es that are records, not
// markers.
func records(es []entry) int {
	n := 0
	for k := range es {
		if !es[k].marker {
			n++
		}
	}
	return n
}
