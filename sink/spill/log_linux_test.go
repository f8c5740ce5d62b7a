package spill

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/shardedsink/shardedsink/internal/tmpfs"
)

// A full disk (a tmpfs of 200 KiB, mounted when the test runs as root,
// which fills in the middle of a segment of 64 KiB: at 256 KiB the fifth
// segment's magic, written as it is created, found the disk full, and
// its WriteError lost nothing): the failed write says how many records it lost, what was written reads
// back in order, and appends go on once room comes back.
func TestAFullDiskLosesTheBufferAndTheLogGoesOn(t *testing.T) {
	dir := tmpfs.Mount(t, "200k")
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

// A disk that stays full (a tmpfs of 200 KiB, mounted when the test runs
// as root): every append after the first failed write begins a new
// segment, on a disk with no room for its first write. No segment is
// left without its magic, none is counted as corrupt, and what the
// failed writes lost is counted once, in Lost (issue 64, item 8).
// Before, the magic waited in the buffer for the segment's first write,
// which failed: each such segment stayed on disk with no bytes, and the
// reader counted it in Corrupt (3 after 4 failed writes).
func TestASegmentWhoseMagicWasNeverWrittenIsNotCorrupt(t *testing.T) {
	dir := tmpfs.Mount(t, "200k")
	l := open(t, dir, Options{MaxBytes: 8 << 20, SegmentBytes: MinSegmentBytes})
	defer l.Close()
	appended, lost, failures := 0, 0, 0
	fail := func(err error) bool {
		var werr *WriteError
		if err == nil {
			return false
		}
		if !errors.As(err, &werr) || !errors.Is(werr, syscall.ENOSPC) {
			t.Fatalf("after %d appends: %v, want a WriteError wrapping ENOSPC", appended, err)
		}
		failures++
		lost += werr.Lost
		return true
	}
	for n := 0; failures < 4 && n < 100000; n++ {
		if fail(l.Append(record(n))) {
			continue // record n is not in the log
		}
		appended++
		if failures > 0 {
			fail(l.Sync()) // writes the new segment's magic and record n, or fails
		}
	}
	if failures < 4 {
		t.Fatalf("%d failed writes in %d appends", failures, appended)
	}
	if lost == 0 {
		t.Fatal("no failed write lost a record: the test does not test the count")
	}
	got := readAll(t, l)
	st := l.Stats()
	if st.Corrupt != 0 {
		t.Errorf("Stats.Corrupt = %d after %d failed writes, want 0", st.Corrupt, failures)
	}
	if st.Lost != uint64(lost) || len(got)+lost != appended {
		t.Errorf("read %d + lost %d (Stats.Lost %d) against %d appended", len(got), lost, st.Lost, appended)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && filepath.Ext(e.Name()) == segSuffix && fi.Size() < int64(len(magic)) {
			t.Errorf("segment %s kept with %d bytes", e.Name(), fi.Size())
		}
	}
}
