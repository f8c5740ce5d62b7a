package engine

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
)

// InlineSize is the longest formatted record that a Record holds in
// place (frontend.InlineSize); a longer one allocates its bytes once,
// bounded in all by MaxQueuedBytes.
const InlineSize = 352

// entry is a record's payload: the formatted bytes of one record,
// preceded by the drop report that goes in front of it if there is one,
// or the bytes of a drop report alone (marker), inline when they fit.
type entry struct {
	big    []byte // the bytes, when longer than InlineSize
	n      int32  // the length of the bytes in inline
	shard  int32
	marker bool
	// fromDisk is set on a record read back from the spill tier: it left
	// its shard's queued when it was spilled (entryCodec).
	fromDisk bool
	inline   [InlineSize]byte
}

// Record holds the formatted bytes of one record on their way through a
// Writer (frontend.Record says how a front-end uses it): the sink carries
// its pointer, so that a record's bytes are written once on the caller
// and read once by the drain worker, whatever its length.
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

// recordPool recycles Records: a caller takes one to format a record
// into, and the drain worker puts it back once the record is written (or a
// caller at once, when the record is shed).
var recordPool = sync.Pool{New: func() any { return new(Record) }}

// GetRecord returns an empty Record from the pool.
func GetRecord() *Record { return recordPool.Get().(*Record) }

// PutRecord puts r back into the pool, empty; r must not be used after.
func PutRecord(r *Record) {
	r.e.big, r.e.n, r.e.marker, r.e.fromDisk, r.e.shard = nil, 0, false, false, 0
	recordPool.Put(r)
}

// newRecord returns a Record of shard i from the pool that holds report
// (nil for none) and then p.
func newRecord(report, p []byte, i int, marker bool) *Record {
	r := GetRecord()
	r.e.shard, r.e.marker = int32(i), marker
	if n := len(report) + len(p); n > InlineSize {
		r.e.big = append(append(bigBytes(n), report...), p...)
		return r
	}
	r.e.append(report)
	r.e.append(p)
	return r
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

// heapBytes is the sink's SizeOf: the bytes a record holds beyond its
// Record, which Options.MaxQueuedBytes bounds. A record that fits its
// Record holds none (the Records queued are bounded by the rings' slots
// already). It does not change while the sink holds the record, as the
// sink requires: it calls it on the push and again when the worker takes
// the record.
func heapBytes(r *Record) int { return cap(r.e.big) }

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

// records returns the number of rs that are records, not markers.
func records(rs []*Record) int {
	n := 0
	for _, r := range rs {
		if !r.e.marker {
			n++
		}
	}
	return n
}

// entryCodec is the spill tier's Codec of Records: a flag byte (1 for a
// marker), the shard as 4 bytes, and the record's bytes. The sink calls
// Append once for each record it moves from a ring to disk; the record then
// leaves its shard's queued (and markers), as a drained one does, so that
// admission lets records in while the tier takes them, and goes back to
// the pool (the sink does not use a value after Append). Left to the
// garbage collector, every record a stalled destination sent to disk was
// a caller's new allocation: zapsink's stalled-pipe probe with a spill
// directory ran 319 to 333 collections, against 116 to 126 with the
// records recycled, and its callers made 1.04 M calls/s, against 1.20 M
// (medians of 8 interleaved runs, 2-core AMD EPYC; cd zapsink && go test
// -run '^$' -bench 'StalledPipe/logger=zapsink-Core-SpillDir$' -benchtime
// 1x, GODEBUG=gctrace=1 for the count). A record read back
// is marked fromDisk, which drain does not take out of queued again. A
// record an earlier Writer with more shards spilled goes to shard
// shard % Shards.
type entryCodec struct{ w *Writer }

func (c entryCodec) Append(dst []byte, r *Record) ([]byte, error) {
	e := &r.e
	st := &c.w.shards[e.shard]
	st.counts.addQueued(-1)
	flag := byte(0)
	if e.marker {
		flag = 1
		st.markers.Add(-1)
	}
	dst = append(dst, flag)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(e.shard))
	dst = append(dst, e.bytes()...)
	PutRecord(r)
	return dst, nil
}

func (c entryCodec) Decode(p []byte) (*Record, error) {
	if len(p) < 5 || p[0] > 1 {
		return nil, fmt.Errorf("logsink: a spilled record of %d bytes that no Writer wrote", len(p))
	}
	shard := int(binary.LittleEndian.Uint32(p[1:5]) % uint32(len(c.w.shards)))
	r := newRecord(nil, p[5:], shard, p[0] == 1)
	r.e.fromDisk = true
	return r, nil
}
