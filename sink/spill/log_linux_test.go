package spill

import (
	"errors"
	"syscall"
	"testing"

	"github.com/shardedsink/shardedsink/internal/tmpfs"
)

// A full disk (a tmpfs of 256 KiB, mounted when the test runs as root):
// the failed write says how many records it lost, what was written reads
// back in order, and appends go on once room comes back.
func TestAFullDiskLosesTheBufferAndTheLogGoesOn(t *testing.T) {
	dir := tmpfs.Mount(t, "256k")
	l := open(t, dir, Options{MaxBytes: 8 << 20, SegmentBytes: MinSegmentBytes})
	defer l.Close()
	var werr *WriteError
	n := 0
	for ; n < 100000; n++ {
		err := l.Append(record(n))
		if errors.As(err, &werr) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if werr == nil || !errors.Is(werr, syscall.ENOSPC) || werr.Lost == 0 {
		t.Fatalf("after %d appends: %v, want a WriteError wrapping ENOSPC that lost records", n, werr)
	}
	lostFrom := n - werr.Lost // the records in the failed buffer, before record n
	got := readAll(t, l)
	expectRun(t, got, 0, lostFrom)
	if st := l.Stats(); st.Lost != uint64(werr.Lost) {
		t.Fatalf("Stats.Lost = %d, want %d", st.Lost, werr.Lost)
	}
	if err := l.Done(); err != nil {
		t.Fatal(err)
	}
	appendN(t, l, n, n+500) // room again (record n was refused): a new segment
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	expectRun(t, readAll(t, l), n, n+500)
}
