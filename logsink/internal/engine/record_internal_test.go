package engine

import (
	"bytes"
	"context"
	"io"
	"testing"
)

// The spill codec hands a record back to the pool once it has encoded it
// (the sink does not use a value after its Codec's Append): the records
// that a stalled destination sends to disk are not the callers'
// allocations. Decode gives back the same bytes, shard and kind.
func TestEntryCodecRecyclesWhatItEncodes(t *testing.T) {
	w, err := New(io.Discard, defaults(Settings{Shards: 2}))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(context.Background())
	c := entryCodec{w}
	r := newRecord(nil, []byte(`{"msg":"spilled"}`), 1, false)
	w.shards[1].counts.addQueued(1) // what the push added
	enc, err := c.Append(nil, r)
	if err != nil {
		t.Fatal(err)
	}
	if r.e.n != 0 || r.e.shard != 0 {
		t.Errorf("after Append the record holds %d bytes of shard %d; want it emptied into the pool", r.e.n, r.e.shard)
	}
	if q := w.shards[1].counts.queued(); q != 0 {
		t.Errorf("shard 1 queued %d after Append; want 0", q)
	}
	got, err := c.Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.e.bytes(), []byte(`{"msg":"spilled"}`)) || got.e.shard != 1 || got.e.marker || !got.e.fromDisk {
		t.Errorf("Decode gave %q of shard %d (marker %v, fromDisk %v)", got.e.bytes(), got.e.shard, got.e.marker, got.e.fromDisk)
	}
}
