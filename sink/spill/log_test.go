package spill

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// record is the i-th test record: its index, then i%300 bytes that
// depend on it, so that a record out of place or changed shows.
func record(i int) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(i))
	for j := range i % 300 {
		b = append(b, byte(i+j))
	}
	return b
}

// index checks that rec is a record of this file's shape and returns its
// index.
func index(t testing.TB, rec []byte) int {
	t.Helper()
	if len(rec) < 8 {
		t.Fatalf("a record of %d bytes", len(rec))
	}
	i := int(binary.LittleEndian.Uint64(rec))
	if want := record(i); string(want) != string(rec) {
		t.Fatalf("record %d holds other bytes", i)
	}
	return i
}

func open(t testing.TB, dir string, opts Options) *Log {
	t.Helper()
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

func appendN(t testing.TB, l *Log, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := l.Append(record(i)); err != nil {
			t.Fatalf("Append %d: %v", i, err)
		}
	}
}

// readAll reads until io.EOF and returns the indexes, in order.
func readAll(t testing.TB, l *Log) []int {
	t.Helper()
	var got []int
	for {
		rec, err := l.Next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		got = append(got, index(t, rec))
	}
}

func expectRun(t testing.TB, got []int, from, to int) {
	t.Helper()
	if len(got) != to-from {
		t.Fatalf("read %d records, want %d (%d..%d); first %v", len(got), to-from, from, to-1, got[:min(len(got), 5)])
	}
	for k, i := range got {
		if i != from+k {
			t.Fatalf("record %d of the read is %d, want %d", k, i, from+k)
		}
	}
}

var small = Options{MaxBytes: 64 << 20, SegmentBytes: MinSegmentBytes}

func TestRecordsComeBackInOrderAcrossSegments(t *testing.T) {
	l := open(t, t.TempDir(), small)
	defer l.Close()
	// Reads interleaved with appends, the reader catching up with the
	// buffer now and then.
	var got []int
	for round := range 10 {
		appendN(t, l, round*1000, (round+1)*1000)
		got = append(got, readAll(t, l)...)
		if err := l.Done(); err != nil {
			t.Fatal(err)
		}
	}
	expectRun(t, got, 0, 10000)
	st := l.Stats()
	if st.Appended != 10000 || st.Read != 10000 || st.Corrupt != 0 || st.Recovered != 0 {
		t.Fatalf("stats %+v", st)
	}
	// 10,000 records of about 160 bytes: 25 segments of 64 KiB, all but
	// the last removed once done.
	if st.Segments != 1 || st.Bytes > MinSegmentBytes {
		t.Fatalf("after Done: %d segments, %d bytes", st.Segments, st.Bytes)
	}
}

// fillUntilFull appends records 0, 1, ... until the budget refuses one
// (ErrFull), and returns how many it took.
func fillUntilFull(t testing.TB, l *Log) int {
	t.Helper()
	for n := 0; ; n++ {
		err := l.Append(record(n))
		if errors.Is(err, ErrFull) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestTheBudgetRefusesAndDoneGivesItBack(t *testing.T) {
	l := open(t, t.TempDir(), Options{MaxBytes: 4 * MinSegmentBytes, SegmentBytes: MinSegmentBytes})
	defer l.Close()
	n := fillUntilFull(t, l)
	if b := l.Stats().Bytes; b > 4*MinSegmentBytes || b < 3*MinSegmentBytes {
		t.Fatalf("full at %d bytes, budget %d", b, 4*MinSegmentBytes)
	}
	expectRun(t, readAll(t, l), 0, n)
	if err := l.Done(); err != nil {
		t.Fatal(err)
	}
	// Every segment but the last is gone: room for at least two more.
	appendN(t, l, n, n+2*MinSegmentBytes/170)
	if err := l.Append(make([]byte, DefaultMaxRecordBytes+1)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Append of a record over MaxRecordBytes: %v", err)
	}
}

func TestALogReadsWhatTheLastOneLeftFromItsCursor(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, small)
	appendN(t, l, 0, 3000)
	for range 1000 {
		if _, err := l.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Done(); err != nil {
		t.Fatal(err)
	}
	for range 500 { // read, not marked done: handed out again
		if _, err := l.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = open(t, dir, small)
	defer l.Close()
	expectRun(t, readAll(t, l), 1000, 3000)
	if st := l.Stats(); st.Recovered != 2000 || st.Corrupt != 0 {
		t.Fatalf("stats %+v", st)
	}
	appendN(t, l, 3000, 3100) // a new segment after the old ones
	expectRun(t, readAll(t, l), 3000, 3100)
}

// segments returns the segment files of dir, oldest first.
func segments(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*"+segSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func TestATornTailIsCountedAndSkipped(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, small)
	appendN(t, l, 0, 100)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	segs := segments(t, dir)
	info, err := os.Stat(segs[len(segs)-1])
	if err != nil {
		t.Fatal(err)
	}
	// A crash mid-write: the last record lacks its last 5 bytes.
	if err := os.Truncate(segs[len(segs)-1], info.Size()-5); err != nil {
		t.Fatal(err)
	}
	l = open(t, dir, small)
	defer l.Close()
	expectRun(t, readAll(t, l), 0, 99)
	if st := l.Stats(); st.Corrupt != 1 {
		t.Fatalf("Corrupt = %d, want the torn tail counted once", st.Corrupt)
	}
	appendN(t, l, 100, 110)
	expectRun(t, readAll(t, l), 100, 110)
}

func TestAFlippedByteEndsItsSegmentAndTheNextOneIsRead(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, small)
	appendN(t, l, 0, 1000) // about three segments
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	segs := segments(t, dir)
	if len(segs) < 3 {
		t.Fatalf("%d segments, want 3 or more", len(segs))
	}
	// The first segment's records in order, to find where record 50 is.
	first := countRecords(t, segs[0])
	b, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	off := len(magic)
	for i := range 50 {
		off += frameSize + len(record(i))
	}
	b[off+frameSize+3] ^= 0x40 // in record 50's payload
	if err := os.WriteFile(segs[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	l = open(t, dir, small)
	defer l.Close()
	got := readAll(t, l)
	expectRun(t, got[:50], 0, 50)
	expectRun(t, got[50:], first, 1000)
	if st := l.Stats(); st.Corrupt != 1 {
		t.Fatalf("Corrupt = %d, want 1", st.Corrupt)
	}
}

// countRecords returns how many records the segment file holds.
func countRecords(t *testing.T, name string) int {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for off := len(magic); off+frameSize <= len(b); n++ {
		off += frameSize + int(binary.LittleEndian.Uint32(b[off:]))
	}
	return n
}

func TestTheDirectoryIsTheLogsAlone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spill")
	l := open(t, dir, small)
	appendN(t, l, 0, 10)
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, small); !errors.Is(err, ErrLocked) {
		t.Fatalf("a second Open on the directory: %v, want ErrLocked", err)
	}
	if out, err := helper(t, "lock", dir).CombinedOutput(); err != nil || !strings.Contains(string(out), "locked") {
		t.Fatalf("a second process's Open: %s %v, want ErrLocked", out, err)
	}
	for _, name := range append([]string{dir}, segments(t, dir)...) {
		info, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o600)
		if info.IsDir() {
			want = 0o700
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", name, info.Mode().Perm(), want)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = open(t, dir, small) // released
	l.Close()
}

func TestOpenNamesEveryBadOption(t *testing.T) {
	_, err := Open(t.TempDir(), Options{MaxBytes: -1, SegmentBytes: -2, MaxRecordBytes: -3})
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("Open: %v", err)
	}
	for _, field := range []string{"MaxBytes = -1", "SegmentBytes = -2", "MaxRecordBytes = -3"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("the error does not name %s: %v", field, err)
		}
	}
}

// helper returns the command that runs this test binary as a helper
// process doing what: "lock" tries to open dir; "write" appends, reads
// and syncs until it is killed (see TestHelperProcess).
func helper(t *testing.T, what, dir string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "SPILL_HELPER="+what, "SPILL_DIR="+dir)
	return cmd
}

func TestHelperProcess(t *testing.T) {
	dir := os.Getenv("SPILL_DIR")
	switch os.Getenv("SPILL_HELPER") {
	case "":
		t.Skip("the helper process of the tests that start one")
	case "lock":
		_, err := Open(dir, small)
		if errors.Is(err, ErrLocked) {
			fmt.Println("locked")
		} else {
			fmt.Println("opened:", err)
		}
		os.Exit(0)
	case "write":
		// Appends records 0, 1, ... and marks done every 50 read, with a
		// Sync every 100 appends; after each Sync it prints "synced A D":
		// A records appended, D marked done, both on disk.
		l, err := Open(dir, small)
		if err != nil {
			fmt.Println("open:", err)
			os.Exit(1)
		}
		out := bufio.NewWriter(os.Stdout)
		done := 0
		for i := 0; ; i++ {
			if err := l.Append(record(i)); err != nil {
				fmt.Println("append:", err)
				os.Exit(1)
			}
			if i%2 == 0 {
				if _, err := l.Next(); err == nil {
					if done++; done%50 == 0 {
						_ = l.Done()
					}
				}
			}
			if (i+1)%100 == 0 {
				markedDone := done - done%50
				if err := l.Sync(); err != nil {
					fmt.Println("sync:", err)
					os.Exit(1)
				}
				fmt.Fprintf(out, "synced %d %d\n", i+1, markedDone)
				out.Flush()
			}
		}
	}
}

// A SIGKILL loses only what was appended since the last Sync, and hands
// out again only what was marked done since then: every record from the
// cursor of the last Sync to at least the last synced append comes back,
// in order, once.
func TestASIGKILLLosesOnlyWhatWasNotSynced(t *testing.T) {
	if testing.Short() {
		t.Skip("a child process for a second")
	}
	for run := range 3 {
		dir := t.TempDir()
		cmd := helper(t, "write", dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(stdout)
		var appended, done int
		for lines.Scan() {
			var a, d int
			if _, err := fmt.Sscanf(lines.Text(), "synced %d %d", &a, &d); err != nil {
				t.Fatalf("the child said %q", lines.Text())
			}
			appended, done = a, d
			if appended >= 20000+run*7000 {
				break
			}
		}
		if err := cmd.Process.Kill(); err != nil { // SIGKILL on Unix
			t.Fatal(err)
		}
		_ = cmd.Wait()
		l := open(t, dir, small)
		got := readAll(t, l)
		st := l.Stats()
		l.Close()
		if len(got) == 0 {
			t.Fatalf("run %d: nothing came back (synced %d appended, %d done)", run, appended, done)
		}
		first := got[0]
		expectRun(t, got, first, first+len(got))
		if first < done {
			t.Fatalf("run %d: records from %d came back, but %d were done at the last Sync seen", run, first, done)
		}
		if first+len(got) < appended {
			t.Fatalf("run %d: records up to %d came back, but %d were synced", run, first+len(got)-1, appended)
		}
		if st.Corrupt > 1 {
			t.Fatalf("run %d: %d corrupt segments, want at most the torn tail", run, st.Corrupt)
		}
		t.Logf("run %d: synced %d appended and %d done; read back %d..%d (%d beyond the last Sync seen), corrupt %d",
			run, appended, done, first, first+len(got)-1, first+len(got)-appended, st.Corrupt)
	}
}

// A budget of one segment: once the full segment is read to its end and
// marked done, it is removed too (the reader starts afresh from the next
// one), so the whole budget comes back and appends go on.
func TestASegmentReadToItsEndGivesItsBytesBack(t *testing.T) {
	l := open(t, t.TempDir(), Options{MaxBytes: MinSegmentBytes})
	defer l.Close()
	n := fillUntilFull(t, l)
	expectRun(t, readAll(t, l), 0, n)
	if err := l.Done(); err != nil {
		t.Fatal(err)
	}
	if st := l.Stats(); st.Bytes != 0 || st.Segments != 0 {
		t.Fatalf("after the whole log was read and done: %+v, want no bytes and no segment", st)
	}
	appendN(t, l, n, n+100)
	expectRun(t, readAll(t, l), n, n+100)
}

// A segment closed for appends stays open until the next Sync fsyncs and
// closes it, and one that Done removes first is closed then (its bytes
// come back only once no file holds it).
func TestSealedSegmentsAreSyncedByTheNextSyncOrClosedWhenRemoved(t *testing.T) {
	l := open(t, t.TempDir(), Options{MaxBytes: 8 << 20, SegmentBytes: MinSegmentBytes})
	defer l.Close()
	appendN(t, l, 0, 2000) // about 5 segments of 64 KiB
	l.mu.Lock()
	sealed := len(l.unsynced)
	l.mu.Unlock()
	if sealed < 2 {
		t.Fatalf("%d segments waiting for a Sync after 2000 appends, want at least 2", sealed)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	left := len(l.unsynced)
	l.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d sealed segments left after Sync, want 0", left)
	}

	appendN(t, l, 2000, 4000)
	expectRun(t, readAll(t, l), 0, 4000)
	if err := l.Done(); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	left = len(l.unsynced)
	l.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d sealed segments still open after Done removed them", left)
	}
}

// MarkDone takes the done segments out without touching the disk: their
// files and bytes stay until Reclaim, which appends do not wait for. A
// file that cannot be removed (here a directory in a segment's place)
// stays, counted, for the next Reclaim; Close reclaims what is left.
func TestMarkDoneLeavesTheFilesToReclaim(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, Options{MaxBytes: 8 << 20, SegmentBytes: MinSegmentBytes})
	appendN(t, l, 0, 2000) // about 5 segments of 64 KiB
	expectRun(t, readAll(t, l), 0, 2000)
	before := l.Stats()
	files := segments(t, dir)
	if err := l.MarkDone(); err != nil {
		t.Fatal(err)
	}
	if st := l.Stats(); st.Bytes != before.Bytes || st.Segments != before.Segments {
		t.Fatalf("after MarkDone: %+v, want the bytes and segments of before: %+v", st, before)
	}
	if got := segments(t, dir); len(got) != len(files) {
		t.Fatalf("MarkDone removed files: %v, before %v", got, files)
	}
	// The oldest segment's file cannot go: a non-empty directory in its
	// place.
	oldest := files[0]
	if err := os.Remove(oldest); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(oldest, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 2000, 2001) // appends go on meanwhile
	if err := l.Reclaim(); err == nil {
		t.Fatal("Reclaim of a segment that cannot be removed returned no error")
	}
	if st := l.Stats(); st.Bytes != before.Bytes+int64(len(record(2000)))+frameSize {
		t.Fatalf("after a failed Reclaim: %d bytes, want all of them still counted", st.Bytes)
	}
	if err := os.RemoveAll(filepath.Join(oldest, "x")); err != nil {
		t.Fatal(err)
	}
	if err := l.Reclaim(); err != nil {
		t.Fatal(err)
	}
	if st := l.Stats(); st.Segments != 1 || st.Bytes >= MinSegmentBytes {
		t.Fatalf("after Reclaim: %+v, want only the segment that takes appends", st)
	}
	if got := segments(t, dir); len(got) != 1 {
		t.Fatalf("after Reclaim the files are %v, want one", got)
	}

	// Close removes what MarkDone left.
	appendN(t, l, 2001, 4000)
	expectRun(t, readAll(t, l), 2000, 4000)
	if err := l.MarkDone(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := segments(t, dir); len(got) > 1 {
		t.Fatalf("after Close the files are %v, want at most the last", got)
	}
}

// A crash after the cursor was synced past segments marked done, but
// before their files were removed, leaves them on disk: the next Log
// removes them when it opens and counts only what is left.
func TestOpenRemovesTheSegmentsBeforeTheCursor(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, Options{MaxBytes: 8 << 20, SegmentBytes: MinSegmentBytes})
	appendN(t, l, 0, 2000) // about 5 segments of 64 KiB
	for i := range 1500 {
		rec, err := l.Next()
		if err != nil {
			t.Fatalf("Next %d: %v", i, err)
		}
		if got := index(t, rec); got != i {
			t.Fatalf("record %d read as %d", i, got)
		}
	}
	if err := l.MarkDone(); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	before := len(segments(t, dir))
	// The crash: the files stay, the lock goes.
	l.mu.Lock()
	dead := len(l.dead)
	l.w.Close()
	l.mu.Unlock()
	l.closeReader()
	l.release()
	if dead < 2 {
		t.Fatalf("%d segments marked done, want at least 2", dead)
	}
	l2 := open(t, dir, Options{MaxBytes: 8 << 20, SegmentBytes: MinSegmentBytes})
	defer l2.Close()
	if got := len(segments(t, dir)); got != before-dead {
		t.Fatalf("%d segment files after the reopen, want %d: %d before, %d done", got, before-dead, before, dead)
	}
	if st := l2.Stats(); st.Segments != before-dead {
		t.Fatalf("the reopened Log counts %d segments, want %d", st.Segments, before-dead)
	}
	expectRun(t, readAll(t, l2), 1500, 2000)
}

// A Log closed with every record read and marked done leaves no segment:
// the last one, which took appends and so was never sealed, goes too
// (the package doc: segments whose records are all done are deleted).
// A Log opened on the directory afterwards starts after it, and reads
// its own records from their start; one closed with records not done
// keeps them.
func TestCloseRemovesTheLastSegmentOnceAllIsDone(t *testing.T) {
	dir := t.TempDir()
	l := open(t, dir, small)
	appendN(t, l, 0, 200) // within one segment
	expectRun(t, readAll(t, l), 0, 200)
	if err := l.Done(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if segs := segments(t, dir); len(segs) != 0 {
		t.Fatalf("Close left %v, every record done", segs)
	}
	l = open(t, dir, small)
	if st := l.Stats(); st.Segments != 0 || st.Bytes != 0 {
		t.Fatalf("the next Log finds %+v", st)
	}
	appendN(t, l, 200, 300)
	expectRun(t, readAll(t, l), 200, 300)
	if err := l.Done(); err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 300, 310) // not read
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if len(segments(t, dir)) != 1 {
		t.Fatalf("segments %v: want the one holding the records not done", segments(t, dir))
	}
	l = open(t, dir, small)
	defer l.Close()
	expectRun(t, readAll(t, l), 300, 310)
}
