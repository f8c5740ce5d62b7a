package spill

import (
	"errors"
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/shardedsink/shardedsink/internal/tmpfs"
)

// failReads makes the reader's opens (open) and reads (read, given the
// offset) of the segment file name fail with EIO while they return true,
// until the test ends, and returns the count of failed calls.
func failReads(t *testing.T, name string, open bool, read func(off int64) bool) *atomic.Int64 {
	t.Helper()
	var failed atomic.Int64
	openFile = func(n string) (*os.File, error) {
		if open && n == name {
			failed.Add(1)
			return nil, &os.PathError{Op: "open", Path: n, Err: syscall.EIO}
		}
		return os.Open(n)
	}
	readAt = func(f *os.File, p []byte, off int64) (int, error) {
		if read != nil && f.Name() == name && read(off) {
			failed.Add(1)
			return 0, &os.PathError{Op: "read", Path: name, Err: syscall.EIO}
		}
		return f.ReadAt(p, off)
	}
	t.Cleanup(func() { openFile, readAt = os.Open, (*os.File).ReadAt })
	return &failed
}

// segmentName returns the file of the log's k-th segment (0: the oldest).
func segmentName(t *testing.T, l *Log, k int) string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if k >= len(l.segs) {
		t.Fatalf("the log has %d segments, not %d", len(l.segs), k+1)
	}
	return l.segs[k].name(l.dir)
}

// readPast reads until io.EOF, as readAll does, and returns the
// indexes and the *ReadErrors and *WriteErrors Next returned on the way.
// A reader that gets another error, or the same one again and again
// without a record in between, fails the test: it would never get past.
func readPast(t *testing.T, l *Log) (got []int, errs []error) {
	t.Helper()
	for again := 0; ; {
		rec, err := l.Next()
		var re *ReadError
		var we *WriteError
		switch {
		case err == io.EOF:
			return got, errs
		case err == nil:
			got, again = append(got, index(t, rec)), 0
		case errors.As(err, &re) || errors.As(err, &we):
			errs = append(errs, err)
			if again++; again > 2 {
				t.Fatalf("after %d records, Next returned %v %d times in a row", len(got), err, again)
			}
		default:
			if again++; again > 10 {
				t.Fatalf("after %d records, Next returned %v %d times in a row: the reader does not get past a read error", len(got), err, again)
			}
		}
	}
}

// requireLostRun checks that got is 0 .. n-1 without one run of lost
// records, and returns the run's start.
func requireLostRun(t *testing.T, got []int, n, lost int) int {
	t.Helper()
	if len(got)+lost != n {
		t.Fatalf("read %d records and lost %d of %d", len(got), lost, n)
	}
	from := 0
	for from < len(got) && got[from] == from {
		from++
	}
	for k := from; k < len(got); k++ {
		if got[k] != k+lost {
			t.Fatalf("record %d of the read is %d, want %d: not one run of %d lost from %d", k, got[k], k+lost, lost, from)
		}
	}
	return from
}

// A read error that persists gives its segment up, and the reader goes
// on (issue 64, item 12): a read in the middle of a segment fails with
// EIO, every time. Next tries it three times, then returns a *ReadError
// that counts the segment's records not yet read, once, in Lost, and
// goes on with the next segment: every other record comes back in
// order, none counted corrupt. Before, Next returned the EIO at every
// call, and the reader never got past it.
func TestAReadErrorThatPersistsGivesItsSegmentUp(t *testing.T) {
	l := open(t, t.TempDir(), Options{MaxBytes: 64 << 20, SegmentBytes: 1 << 20})
	defer l.Close()
	const n = 20000 // about 3 MiB: four segments
	appendN(t, l, 0, n)
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	failed := failReads(t, segmentName(t, l, 1), false, func(off int64) bool { return off >= readSize })
	got, errs := readPast(t, l)
	var re *ReadError
	if len(errs) != 1 || !errors.As(errs[0], &re) || !errors.Is(re, syscall.EIO) || re.Lost == 0 {
		t.Fatalf("Next returned %v, want one *ReadError wrapping EIO that lost records", errs)
	}
	from := requireLostRun(t, got, n, re.Lost)
	if st := l.Stats(); st.Lost != uint64(re.Lost) || st.Corrupt != 0 || st.Read != uint64(len(got)) {
		t.Fatalf("Stats %+v, want Lost %d, Corrupt 0, Read %d", st, re.Lost, len(got))
	}
	if from == 0 || failed.Load() != maxReadTries {
		t.Fatalf("lost from record %d after %d failed reads: want a segment's first window read, and %d tries", from, failed.Load(), maxReadTries)
	}
	if err := l.Done(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(segmentName(t, l, 0)); err != nil {
		t.Fatalf("the live segment: %v", err)
	}
}

// A segment whose file does not open is given up as one that does not
// read: its records are counted in Lost, not as a corrupt segment, and
// the reader goes on with the next.
func TestASegmentThatDoesNotOpenIsGivenUp(t *testing.T) {
	l := open(t, t.TempDir(), Options{MaxBytes: 64 << 20, SegmentBytes: 1 << 20})
	defer l.Close()
	const n = 20000
	appendN(t, l, 0, n)
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	failed := failReads(t, segmentName(t, l, 2), true, nil)
	got, errs := readPast(t, l)
	var re *ReadError
	if len(errs) != 1 || !errors.As(errs[0], &re) || re.Lost == 0 {
		t.Fatalf("Next returned %v, want one *ReadError that lost records", errs)
	}
	requireLostRun(t, got, n, re.Lost)
	if st := l.Stats(); st.Lost != uint64(re.Lost) || st.Corrupt != 0 || failed.Load() != maxReadTries {
		t.Fatalf("Stats %+v after %d failed opens, want Lost %d, Corrupt 0, %d tries", st, failed.Load(), re.Lost, maxReadTries)
	}
}

// The segment that takes appends can be given up too: it is closed, the
// records written to it and not read are lost, and the next appends go
// into a new segment, which reads.
func TestTheSegmentTakingAppendsIsClosedWhenGivenUp(t *testing.T) {
	l := open(t, t.TempDir(), small)
	defer l.Close()
	appendN(t, l, 0, 100)
	expectRun(t, readAll(t, l), 0, 100)
	failReads(t, segmentName(t, l, 0), false, func(off int64) bool { return off > int64(len(magic)) })
	appendN(t, l, 100, 200)
	got, errs := readPast(t, l)
	var re *ReadError
	if len(got) != 0 || len(errs) != 1 || !errors.As(errs[0], &re) || re.Lost != 100 {
		t.Fatalf("read %d records and %v, want a *ReadError that lost the 100 appended since", len(got), errs)
	}
	appendN(t, l, 200, 300)
	expectRun(t, readAll(t, l), 200, 300)
	if st := l.Stats(); st.Lost != 100 || st.Corrupt != 0 || st.Read != 200 {
		t.Fatalf("Stats %+v, want Lost 100, Corrupt 0, Read 200", st)
	}
}

// The write that Next makes for a reader that caught up with the buffer
// can fail (here EFBIG, past a file size limit): Next returns its
// *WriteError, whose records Stats.Lost counts, once, and the next call
// goes on. Before, Next swallowed it, and a caller learnt of the lost
// records only from Stats (the sink, at the next end of the log).
func TestNextReturnsTheWriteErrorOfItsWrite(t *testing.T) {
	if !tmpfs.LimitFileSize(t, 4096) {
		return // the child process ran the test
	}
	l := open(t, t.TempDir(), small)
	defer l.Close()
	appendN(t, l, 0, 100) // about 15 KiB, in the buffer
	got, errs := readPast(t, l)
	var we *WriteError
	if len(got) != 0 || len(errs) != 1 || !errors.As(errs[0], &we) || we.Lost != 100 {
		t.Fatalf("read %d records and %v, want the *WriteError of the buffer's 100", len(got), errs)
	}
	if st := l.Stats(); st.Lost != 100 {
		t.Fatalf("Stats.Lost = %d, want 100", st.Lost)
	}
	appendN(t, l, 100, 110) // a new segment, within the limit
	expectRun(t, readAll(t, l), 100, 110)
}
