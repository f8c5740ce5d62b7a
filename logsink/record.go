package logsink

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
)

// InlineSize is the longest formatted record that travels inside its ring
// slot; a longer one allocates its bytes once, bounded in all by
// Options.MaxQueuedBytes. A record of five attributes and a time, a level
// and a message takes about 150 bytes in JSON, 250 with the caller's file
// and line.
const InlineSize = 352

// entry is what travels through the sink: the formatted bytes of one
// record, preceded by the drop report that goes in front of it if there is
// one, or the bytes of a drop report alone (marker), in the slot itself
// when they fit. With the ring's sequence number a slot takes 400 bytes on
// 64-bit platforms.
type entry struct {
	big    []byte // the bytes, when longer than InlineSize
	n      int32  // the length of the bytes in inline
	shard  int32
	marker bool
	// fromDisk is set on an entry read back from the spill tier: it left
	// its shard's queued when it was spilled (entryCodec).
	fromDisk bool
	inline   [InlineSize]byte
}

// Record holds the formatted bytes of one record on their way into a
// [Writer], for front-ends that format on the caller (slogsink, zapsink):
// it is an io.Writer that keeps the bytes in a buffer the size of a ring
// slot, and allocates only for a record longer than [InlineSize]. Take one
// with [GetRecord], write the record's bytes into it, and hand it to
// [Stream.Push], which copies it into the ring slot and puts it back; one
// that is not pushed goes back with [PutRecord]. A Record is used by one
// goroutine at a time.
type Record struct{ e entry }

// Write appends p to the record's bytes; it always returns len(p), nil.
func (r *Record) Write(p []byte) (int, error) {
	r.e.append(p)
	return len(p), nil
}

// Len returns the number of bytes written into r.
func (r *Record) Len() int { return r.e.len() }

// Bytes returns the bytes written into r; they are valid until r is
// pushed, put back or written to again.
func (r *Record) Bytes() []byte { return r.e.bytes() }

// recordPool recycles the Records that records are formatted into on the
// caller and pushed from (the push copies the record into its ring slot).
// A caller takes one and puts it back within the same call, on the same P
// as a rule, as slog's own handlers do with their buffers.
var recordPool = sync.Pool{New: func() any { return new(Record) }}

// GetRecord returns an empty Record from a pool.
func GetRecord() *Record { return recordPool.Get().(*Record) }

// PutRecord puts r back into the pool, empty; r must not be used after.
// Its bytes beyond a slot, if any, belong to the ring slot it was pushed
// into, or to nobody.
func PutRecord(r *Record) {
	r.e.big, r.e.n, r.e.marker, r.e.shard = nil, 0, false, 0
	recordPool.Put(r)
}

// makeEntry copies report (nil for none) and then p into a new entry of
// shard i.
func makeEntry(report, p []byte, i int, marker bool) entry {
	e := entry{shard: int32(i), marker: marker}
	if n := len(report) + len(p); n <= InlineSize {
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
		if n := int(e.n) + len(p); n <= InlineSize {
			copy(e.inline[e.n:], p)
			e.n = int32(n)
			return
		}
		e.big = append(bigBytes(int(e.n)+len(p)), e.inline[:e.n]...)
	}
	e.big = append(e.big, p...)
}

// bigBytes allocates the bytes of a record longer than InlineSize, room
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

// entryCodec is the spill tier's Codec of entries: a flag byte (1 for a
// marker), the shard as 4 bytes, and the record's bytes. The sink calls
// Append once for each entry it moves from a ring to disk: the entry then
// leaves its shard's queued (and markers), as a drained one does, so that
// admission lets records in while the tier takes them. An entry read back
// is marked fromDisk, which drain does not take out of queued again. A
// record an earlier Writer with more shards spilled goes to shard
// shard % Shards.
type entryCodec struct{ w *Writer }

func (c entryCodec) Append(dst []byte, e entry) ([]byte, error) {
	st := &c.w.shards[e.shard]
	st.queued.Add(-1)
	flag := byte(0)
	if e.marker {
		flag = 1
		st.markers.Add(-1)
	}
	dst = append(dst, flag)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(e.shard))
	return append(dst, e.bytes()...), nil
}

func (c entryCodec) Decode(p []byte) (entry, error) {
	if len(p) < 5 || p[0] > 1 {
		return entry{}, fmt.Errorf("logsink: a spilled record of %d bytes that no Writer wrote", len(p))
	}
	shard := int(binary.LittleEndian.Uint32(p[1:5]) % uint32(len(c.w.shards)))
	e := makeEntry(nil, p[5:], shard, p[0] == 1)
	e.fromDisk = true
	return e, nil
}
