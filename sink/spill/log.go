package spill

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/shardedsink/shardedsink/internal/fielderr"
)

// Errors of a Log. A failed write is a *WriteError.
var (
	// ErrInvalidOptions is wrapped by the error of Open for bad Options.
	ErrInvalidOptions = errors.New("spill: invalid options")
	// ErrLocked is returned by Open for a directory that another Log (in
	// this process, or another process on Unix) holds.
	ErrLocked = errors.New("spill: the directory is held by another Log")
	// ErrFull is returned by Append when the record would take the files
	// past Options.MaxBytes.
	ErrFull = errors.New("spill: the log is at its byte budget")
	// ErrTooLarge is returned by Append for a record longer than
	// Options.MaxRecordBytes.
	ErrTooLarge = errors.New("spill: record longer than MaxRecordBytes")
	// ErrClosed is returned by every call after Close.
	ErrClosed = errors.New("spill: log closed")
)

// WriteError is a failed write of buffered records to a segment (ENOSPC,
// EIO, a directory that went away): Lost records, appended since the last
// successful write, are gone, and the segment ends at its last good
// record. The Log goes on: the next Append starts a new segment.
type WriteError struct {
	Lost int
	Err  error
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("spill: a write lost %d records: %v", e.Lost, e.Err)
}

func (e *WriteError) Unwrap() error { return e.Err }

// ReadError is a segment that could not be read: its file would not
// open, or a read of it failed three times in a row (EIO, a file that is
// no longer one). [Log.Next] gives up the rest of it (a segment
// still taking appends is closed first) and goes on with the next
// segment at its next call. Lost records, of those this Log appended,
// were in it unread (counted in Stats.Lost); how many a segment of an
// earlier Log held is not known, and counts 0.
type ReadError struct {
	Lost int
	Err  error
}

func (e *ReadError) Error() string {
	return fmt.Sprintf("spill: a segment could not be read, %d records lost: %v", e.Lost, e.Err)
}

func (e *ReadError) Unwrap() error { return e.Err }

// The defaults and limits of Options.
const (
	DefaultSegmentBytes   = 64 << 20
	DefaultMaxRecordBytes = 16 << 20
	// MinSegmentBytes is the smallest SegmentBytes; a smaller MaxBytes
	// makes its segments MaxBytes long.
	MinSegmentBytes = 64 << 10
)

// Options configure a Log. The zero value of each field but MaxBytes
// means its default.
type Options struct {
	// MaxBytes is the budget: the most bytes the segment files (and the
	// buffer not yet written to them) may hold. Required.
	MaxBytes int64
	// SegmentBytes is the size at which a segment is closed and a new one
	// begun. Default the smaller of DefaultSegmentBytes and an eighth of
	// MaxBytes, at least MinSegmentBytes (or MaxBytes when that is
	// smaller). The disk gives back a segment's bytes only once all its
	// records are done, so smaller segments free the budget sooner.
	SegmentBytes int64
	// MaxRecordBytes bounds one record, and so what reading one back may
	// allocate. Default DefaultMaxRecordBytes.
	MaxRecordBytes int
}

// Stats are a Log's figures. The counters only grow.
type Stats struct {
	// Bytes is what the budget counts now: the segment files and the
	// buffer.
	Bytes int64
	// Segments is the number of segment files.
	Segments int
	// Appended counts the records Append took; Read those Next returned.
	Appended, Read uint64
	// Recovered counts the records Next returned that an earlier Log on
	// the directory had written.
	Recovered uint64
	// Corrupt counts the segments whose valid part a torn or corrupt
	// record ended (the rest of the segment is skipped), and cursor files
	// that did not check out.
	Corrupt uint64
	// Lost counts the records that failed writes lost (WriteError.Lost)
	// and those that segments given up as unreadable held unread
	// (ReadError.Lost).
	Lost uint64
}

const (
	magic      = "SHSPILL1"
	frameSize  = 8 // length and checksum
	bufferSize = 64 << 10
	// readSize is the reader's window: larger than the appender's
	// buffer, since a read holds no lock that an append waits for
	// (replaying 200-byte values through a sink, -bench
	// '^BenchmarkSpill$/replay' ./sink/: 300 ns a value against 333 ns
	// with 64 KiB), while a larger write buffer made the spiller's
	// pushes wait longer (-bench '^BenchmarkSpill$/stalled': +32 %).
	readSize   = 256 << 10
	segSuffix  = ".seg"
	cursorName = "cursor"
	lockName   = "LOCK"
	// maxReadTries is how many times in a row the reader tries to open a
	// segment or read from it before it gives the segment up (ReadError).
	maxReadTries = 3
)

// openFile and readAt are how the reader opens a segment and reads from
// it: os.Open and (*os.File).ReadAt, but in the tests that make them fail
// as a failing disk does (readerror_test.go).
var (
	openFile = os.Open
	readAt   = (*os.File).ReadAt
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// held is the set of directories that a Log of this process holds.
var held struct {
	sync.Mutex
	dirs map[string]bool
}

// segment is one segment file.
type segment struct {
	id uint64
	// size is how many of its bytes are written, all of them whole
	// records (and the magic): the reader reads up to it without the
	// Log's lock, never into a record the appender has yet to write. It
	// grows only after a write(2) of whole records has returned (flush).
	size atomic.Int64
	// sealed is set once no append will go into it any more (full, failed,
	// or written by an earlier Log), after size took its last value: a
	// reader that loads sealed true and then size has the segment's end.
	sealed atomic.Bool
	// old: written by an earlier Log on the directory.
	old bool
	// records is how many records of this Log's have been written to the
	// file (flush); under Log.mu. A segment given up as unreadable
	// (giveUp) lost those of them the reader had yet to read.
	records int
}

func (s *segment) name(dir string) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", s.id, segSuffix))
}

// Log is a segment log in a directory of its own. One goroutine may
// append and sync while another reads and marks done; Stats is safe from
// any goroutine.
type Log struct {
	dir  string
	opts Options
	lock *os.File

	// mu guards the segment list, the writer's state and the done
	// position; the reader takes it only at a segment's end, when it needs
	// the buffer written, and in Done.
	mu   sync.Mutex
	segs []*segment // oldest first
	w    *os.File   // the file of the last segment while it takes appends
	// unsynced are the segments closed for appends since the last Sync,
	// their files still open: the next Sync fsyncs and closes them, or
	// MarkDone, taking one out, hands its file to Reclaim (an open file
	// keeps its bytes on the disk).
	unsynced []sealedFile
	// dead are the segments MarkDone took out of segs, all their records
	// done: Reclaim closes and removes their files, and only then gives
	// their bytes back to the budget.
	dead []sealedFile
	// syncMu orders Sync and Close; a Sync holds it, not mu, while it
	// fsyncs, so that appends and reads go on meanwhile.
	syncMu     sync.Mutex
	buf        []byte // appended records not yet written to w
	bufRecords int
	bytes      atomic.Int64
	// closed is set by Close, under mu; Next loads it without mu.
	closed   atomic.Bool
	dirDirty bool // a segment was created or removed since the last Sync
	// doneID and doneOff are where the first record not marked done
	// starts; synced* is that position as the cursor file has it.
	doneID, doneOff     uint64
	syncedID, syncedOff uint64

	// The reader's state: only Next and Done touch it.
	rseg    *segment
	rfile   *os.File
	roff    int64  // the offset of the next record in rseg
	rread   int    // the records read from rseg
	rend    int64  // rseg's size as readRecord last loaded it
	rbuf    []byte // a window of rseg's bytes, from rbufOff
	rbufOff int64
	rec     []byte // the record Next returned last, when larger than rbuf

	appended, read, recovered, corrupt, lost atomic.Uint64
}

// Open opens the Log in dir, creating the directory (0700) if need be,
// and takes its lock. A Log opened on a directory that an earlier Log
// wrote reads back, from the cursor of its last Sync, what that one left.
func Open(dir string, opts Options) (*Log, error) {
	opts, err := opts.settle()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, err
	}
	held.Lock()
	if held.dirs[abs] {
		held.Unlock()
		return nil, fmt.Errorf("%w: %s", ErrLocked, abs)
	}
	if held.dirs == nil {
		held.dirs = map[string]bool{}
	}
	held.dirs[abs] = true
	held.Unlock()
	l := &Log{dir: abs, opts: opts}
	if err := l.open(); err != nil {
		l.release()
		return nil, err
	}
	return l, nil
}

func (o Options) settle() (Options, error) {
	errs := fielderr.New(ErrInvalidOptions)
	if o.MaxBytes <= 0 {
		errs.Add("MaxBytes", o.MaxBytes, "must be positive: it is the disk budget")
	}
	if o.SegmentBytes < 0 {
		errs.Add("SegmentBytes", o.SegmentBytes, "must be positive, or zero for the default")
	}
	if o.MaxRecordBytes < 0 {
		errs.Add("MaxRecordBytes", o.MaxRecordBytes, "must be positive, or zero for the default")
	}
	if err := errs.Err(); err != nil {
		return o, err
	}
	if o.SegmentBytes == 0 {
		o.SegmentBytes = min(DefaultSegmentBytes, max(o.MaxBytes/8, MinSegmentBytes))
	}
	o.SegmentBytes = min(max(o.SegmentBytes, MinSegmentBytes), o.MaxBytes)
	if o.MaxRecordBytes == 0 {
		o.MaxRecordBytes = DefaultMaxRecordBytes
	}
	return o, nil
}

// open takes the lock file and finds what an earlier Log left.
func (l *Log) open() error {
	f, err := os.OpenFile(filepath.Join(l.dir, lockName), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, ErrLocked) {
			return fmt.Errorf("%w: %s (another process)", ErrLocked, l.dir)
		}
		return err
	}
	l.lock = f
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), segSuffix)
		if !ok {
			continue
		}
		id, err := strconv.ParseUint(name, 10, 64)
		if err != nil {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		s := &segment{id: id, old: true}
		s.size.Store(info.Size())
		s.sealed.Store(true)
		l.segs = append(l.segs, s)
		l.bytes.Add(info.Size())
	}
	slices.SortFunc(l.segs, func(a, b *segment) int { return cmp.Compare(a.id, b.id) })
	l.doneID, l.doneOff = l.readCursor()
	l.syncedID, l.syncedOff = l.doneID, l.doneOff
	// Segments before the cursor were done before the crash that kept
	// them from being removed.
	for len(l.segs) > 0 && l.segs[0].id < l.doneID {
		l.dead = append(l.dead, l.detachFirst())
	}
	return l.Reclaim()
}

// readCursor returns the position the cursor file holds, or 0, 0 (the
// start of the oldest segment) when there is none or it does not check
// out (counted as corrupt).
func (l *Log) readCursor() (id, off uint64) {
	b, err := os.ReadFile(filepath.Join(l.dir, cursorName))
	if err != nil {
		return 0, 0
	}
	if len(b) != 20 || crc32.Checksum(b[:16], castagnoli) != binary.LittleEndian.Uint32(b[16:]) {
		l.corrupt.Add(1)
		return 0, 0
	}
	return binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
}

// Append adds p as one record. It returns ErrFull when the record would
// take the files past MaxBytes, ErrTooLarge, ErrClosed, or a *WriteError
// when writing out the buffer, to make room for p, failed: the records
// appended before that the buffer held are lost (WriteError.Lost). On any
// error p is not in the log. It does not keep p.
func (l *Log) Append(p []byte) error {
	if len(p) > l.opts.MaxRecordBytes {
		return ErrTooLarge
	}
	need := int64(frameSize + len(p))
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return ErrClosed
	}
	if l.w != nil {
		s := l.segs[len(l.segs)-1]
		if s.size.Load()+int64(len(l.buf))+need > l.opts.SegmentBytes {
			if err := l.seal(); err != nil {
				return err
			}
		} else if len(l.buf) > 0 && int64(len(l.buf))+need > bufferSize {
			if err := l.flush(); err != nil {
				return err
			}
		}
	}
	extra := need
	if l.w == nil {
		extra += int64(len(magic))
	}
	if l.bytes.Load()+extra > l.opts.MaxBytes {
		return ErrFull
	}
	if l.w == nil {
		if err := l.create(); err != nil {
			return err
		}
	}
	at := len(l.buf)
	l.buf = binary.LittleEndian.AppendUint32(l.buf, uint32(len(p)))
	crc := crc32.Update(crc32.Update(0, castagnoli, l.buf[at:]), castagnoli, p)
	l.buf = append(binary.LittleEndian.AppendUint32(l.buf, crc), p...)
	l.bufRecords++
	l.bytes.Add(need)
	l.appended.Add(1)
	return nil
}

// create begins a new segment, after the last one, and writes its magic:
// a segment of this Log's has its magic on disk from the start, so that
// a write that fails later cuts it back to whole records, never to a
// segment without a magic, which would hold no record and read as
// corrupt (a full disk left one per failed write: issue 64, item 8). A
// segment whose magic cannot be written is removed, and create returns
// a *WriteError that lost nothing. l.mu is held.
func (l *Log) create() error {
	// After the done position: every segment before it may be gone (a
	// segment read to its end is removed with it, see Done).
	id := max(uint64(1), l.doneID)
	if n := len(l.segs); n > 0 {
		id = max(id, l.segs[n-1].id+1)
	}
	s := &segment{id: id}
	f, err := os.OpenFile(s.name(l.dir), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return &WriteError{Err: err}
	}
	if _, err := f.Write([]byte(magic)); err != nil {
		_ = f.Close()
		if rerr := os.Remove(s.name(l.dir)); rerr != nil {
			// Kept, sealed with nothing written: it holds no record, the
			// reader passes it by (nextSegment) and MarkDone takes it out
			// with the segments before it; and the next segment takes
			// the number after it, not its name.
			s.sealed.Store(true)
			l.segs = append(l.segs, s)
			l.dirDirty = true
		}
		return &WriteError{Err: err}
	}
	s.size.Store(int64(len(magic)))
	l.segs = append(l.segs, s)
	l.w = f
	l.dirDirty = true
	l.buf = l.buf[:0]
	l.bufRecords = 0
	l.bytes.Add(int64(len(magic)))
	return nil
}

// flush writes the buffer to the last segment. A failure loses the
// records in it: the segment is cut back to its last good record and
// sealed. l.mu is held.
func (l *Log) flush() error {
	if len(l.buf) == 0 || l.w == nil {
		return nil
	}
	s := l.segs[len(l.segs)-1]
	n, err := l.w.Write(l.buf)
	if err == nil && n == len(l.buf) {
		// Published only now that the write has returned: a reader that
		// loads the new size (readRecord) reads these bytes back whole.
		s.size.Add(int64(n))
		s.records += l.bufRecords
		l.buf, l.bufRecords = l.buf[:0], 0
		return nil
	}
	if err == nil {
		err = io.ErrShortWrite
	}
	lost := l.bufRecords
	l.bytes.Add(-int64(len(l.buf)))
	l.buf, l.bufRecords = l.buf[:0], 0
	// Best effort: a partial write past size is a torn record the reader
	// would skip anyway.
	_ = l.w.Truncate(s.size.Load())
	l.unsynced = append(l.unsynced, sealedFile{s, l.w}) // a Sync may be in its fsync
	l.w = nil
	s.sealed.Store(true)
	l.lost.Add(uint64(lost))
	return &WriteError{Lost: lost, Err: err}
}

// seal writes the last segment and closes it for appends; the next Sync
// fsyncs it. l.mu is held.
func (l *Log) seal() error {
	err := l.flush()
	if l.w != nil {
		s := l.segs[len(l.segs)-1]
		l.unsynced = append(l.unsynced, sealedFile{s, l.w})
		l.w = nil
		s.sealed.Store(true)
	}
	return err
}

// sealedFile is a segment closed for appends and its file, open until a
// Sync has fsynced it (Log.unsynced).
type sealedFile struct {
	seg *segment
	f   *os.File
}

// Sync writes the buffer, fsyncs the segments it and the appends since
// the last Sync went to, and records the done position in the cursor
// file: from its return, a crash loses none of the records appended
// before the call, and a Log opened afterwards does not hand out again
// those marked done before it. It holds the Log's lock only to write the
// buffer and to take what it syncs: Append, Next and Done go on while it
// waits for the disk. One Sync runs at a time.
func (l *Log) Sync() error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return ErrClosed
	}
	return l.sync(false)
}

// sync is Sync's work, for Sync and Close. l.mu is held on entry and on
// return, and l.syncMu throughout; unless hold is set (Close, when
// nothing appends or reads any more), l.mu is released while the disk
// works.
func (l *Log) sync(hold bool) error {
	unlock, lock := l.mu.Unlock, l.mu.Lock
	if hold {
		unlock, lock = func() {}, func() {}
	}
	err := l.flush()
	files, cur := l.unsynced, l.w
	l.unsynced = nil
	id, off := l.doneID, l.doneOff
	cursor := id != l.syncedID || off != l.syncedOff
	unlock()
	// cur may be sealed meanwhile: it is then in unsynced, open, for the
	// next Sync to fsync again (at no cost) and close.
	err = syncFiles(files, cur, err)
	var cerr error
	if cursor {
		cerr = writeCursor(l.dir, id, off)
	}
	lock()
	if cursor && cerr == nil {
		l.syncedID, l.syncedOff = id, off
		l.dirDirty = true
	} else if cerr != nil && err == nil {
		err = &WriteError{Err: cerr}
	}
	dirty := l.dirDirty
	l.dirDirty = false
	unlock()
	var derr error
	if dirty {
		derr = syncDir(l.dir)
	}
	lock()
	if derr != nil {
		l.dirDirty = true
		if err == nil {
			err = &WriteError{Err: derr}
		}
	}
	return err
}

// syncFiles fsyncs and closes files, the segments sealed since the last
// Sync, and fsyncs cur, the segment taking appends (nil: none); it
// returns err, or the first failure as a *WriteError when err is nil.
func syncFiles(files []sealedFile, cur *os.File, err error) error {
	for _, sf := range files {
		if serr := sf.f.Sync(); serr != nil && err == nil {
			err = &WriteError{Err: serr}
		}
		_ = sf.f.Close()
	}
	if cur != nil {
		if serr := cur.Sync(); serr != nil && err == nil {
			err = &WriteError{Err: serr}
		}
	}
	return err
}

// writeCursor replaces the cursor file in dir with the done position id,
// off: a temporary file, fsynced, renamed over it. The caller marks the
// directory dirty once it succeeds.
func writeCursor(dir string, id, off uint64) error {
	var b [20]byte
	binary.LittleEndian.PutUint64(b[:], id)
	binary.LittleEndian.PutUint64(b[8:], off)
	binary.LittleEndian.PutUint32(b[16:], crc32.Checksum(b[:16], castagnoli))
	tmp := filepath.Join(dir, cursorName+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b[:])
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, cursorName))
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// errCorrupt is readRecord's verdict on a record whose frame or checksum
// is bad; errUnopened, on a segment that nextSegment could not open or
// found without its magic.
var (
	errCorrupt  = errors.New("spill: corrupt record")
	errUnopened = errors.New("spill: segment not opened")
)

// Next returns the next record in the order they were appended, or
// io.EOF when there is none now (Append may add more), or ErrClosed. The
// record is valid until the next call of Next. Only one goroutine may call
// Next and Done; it may run beside the one that appends: Next reads only
// whole records that have been written, writing out the buffer when it
// has caught up with it. A torn or corrupt record ends its segment's
// valid part: Next counts it and goes on with the next segment. Next
// returns a *WriteError when that write of the buffer failed, and a
// *ReadError when it gave a segment up as unreadable; either way the
// records lost are counted (Stats.Lost), and the next call goes on past
// them. A read that fails is tried again at once, three times in all: a
// read error never stops the reader.
func (l *Log) Next() ([]byte, error) {
	// Close stores closed before it returns: a Next called after that
	// loads true.
	if l.closed.Load() {
		return nil, ErrClosed
	}
	for tries := 0; ; {
		if l.rseg == nil {
			if ok, err := l.nextSegment(); !ok || err != nil {
				return nil, cmp.Or(err, io.EOF)
			}
		}
		rec, err := l.readRecord()
		switch {
		case err == nil:
			l.read.Add(1)
			l.rread++
			if l.rseg.old {
				l.recovered.Add(1)
			}
			return rec, nil
		case err == errCorrupt:
			l.corrupt.Add(1)
			l.endSegment()
		case err == errUnopened:
			l.endSegment() // counted by nextSegment
		case err != io.EOF:
			// A read failed (EIO): tried again, and after maxReadTries
			// in a row the segment is given up, so that a disk that
			// cannot read it does not stop the reader for good.
			if tries++; tries < maxReadTries {
				continue
			}
			return nil, l.giveUp(err)
		default:
			// At the readable end of rseg: the buffer may hold more, or
			// appends may come, or the segment is over.
			flushed, err := l.flushForReader()
			if err != nil {
				return nil, err
			}
			if flushed {
				continue
			}
			// sealed before size: true means the size loaded next is the
			// segment's end (seal stores it after size's last store).
			if !l.rseg.sealed.Load() {
				return nil, io.EOF // the appender may yet add to rseg
			}
			end := l.rseg.size.Load()
			if end > l.rend {
				// Written and sealed since readRecord loaded the size:
				// what is past rend is whole records, to read.
				continue
			}
			if l.roff < end {
				// A torn tail: bytes that are no whole record, in a
				// segment that no append adds to. Only an earlier Log's
				// crash leaves one (this Log writes whole records and
				// cuts a failed write back); never a live appender's
				// record not written yet, since rend was the end.
				l.corrupt.Add(1)
			}
		}
		// rseg is over: on to the next one, if there is one yet.
		l.closeReader()
		if ok, err := l.nextSegment(); !ok || err != nil {
			return nil, cmp.Or(err, io.EOF)
		}
	}
}

// giveUp gives up the rest of rseg, which could not be read (err), and
// returns the *ReadError that Next returns: a segment still taking
// appends is closed first (seal), and the records of this Log's in it
// that the reader had yet to read are counted as lost. The reader is at
// the segment's end: the next Next goes on with the next one, and
// MarkDone takes it out.
func (l *Log) giveUp(err error) error {
	l.mu.Lock()
	if !l.rseg.sealed.Load() {
		_ = l.seal() // a failed write counts what it lost itself
	}
	lost := 0
	if !l.rseg.old {
		lost = max(l.rseg.records-l.rread, 0)
	}
	l.lost.Add(uint64(lost))
	l.mu.Unlock()
	l.roff = l.rseg.size.Load()
	return &ReadError{Lost: lost, Err: err}
}

// Fits reports whether a record of n bytes is within the budget now, with
// its frame and the magic of a new segment: an Append of it would not
// return ErrFull, unless appends fill the files first. Any goroutine may
// call it.
func (l *Log) Fits(n int) bool {
	return l.bytes.Load()+int64(frameSize+len(magic)+n) <= l.opts.MaxBytes
}

// Dir returns the Log's directory, as an absolute path.
func (l *Log) Dir() string { return l.dir }

// FromEarlier reports whether the record that Next returned last was
// written by an earlier Log on the directory (one that Stats counts as
// Recovered). Only the goroutine that calls Next may call it.
func (l *Log) FromEarlier() bool { return l.rseg != nil && l.rseg.old }

// flushForReader writes the buffer when the reader has reached the end of
// the segment it goes to, and reports whether it wrote anything.
func (l *Log) flushForReader() (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return false, ErrClosed
	}
	if l.segs[len(l.segs)-1] != l.rseg || l.w == nil || len(l.buf) == 0 {
		return false, nil
	}
	// A failed write (a *WriteError, for Next to return) sealed the
	// segment: the reader goes on from there.
	return true, l.flush()
}

// endSegment ends the reading of rseg at a corrupt record: the rest of it
// is skipped. A segment still taking appends is sealed first (its tail,
// buffer included, is what the corruption costs), so that appends go on
// in a new one.
func (l *Log) endSegment() {
	l.mu.Lock()
	if !l.rseg.sealed.Load() {
		_ = l.seal()
	}
	l.mu.Unlock()
	l.roff = l.rseg.size.Load()
}

// nextSegment moves the reader to the segment after rseg (or, at first,
// to the done position), and reports whether there is one. A segment
// whose magic is wrong is counted as corrupt and skipped; one that
// cannot be opened or read (openSegment) is given up, and its
// *ReadError returned.
func (l *Log) nextSegment() (bool, error) {
	for {
		l.mu.Lock()
		var next *segment
		off := int64(len(magic))
		for _, s := range l.segs {
			if l.rseg == nil && s.id >= l.doneID || l.rseg != nil && s.id > l.rseg.id {
				next = s
				if l.rseg == nil && s.id == l.doneID && l.doneOff > uint64(off) {
					off = int64(l.doneOff)
				}
				break
			}
		}
		l.mu.Unlock()
		if next == nil {
			return false, nil
		}
		f, err := l.openSegment(next)
		l.rseg, l.roff, l.rread = next, off, 0
		switch {
		case err == errCorrupt:
			l.corrupt.Add(1) // Next ends it (errUnopened) if it is last
			continue
		case err != nil:
			return true, l.giveUp(err) // Next ends it (errUnopened)
		}
		l.rfile = f
		l.rbuf, l.rbufOff = l.rbuf[:0], off
		return true, nil
	}
}

// openSegment opens s for the reader and checks its magic: errCorrupt
// when it is wrong (or shorter than the file's size says), or the error
// of the open or the read when they failed maxReadTries times in a row.
// A segment shorter than its magic holds no record: one that an earlier
// Log created and never wrote to before a crash, or one whose magic
// create could not write nor remove. It is read as empty, not counted as
// corrupt: what it would have held was in a buffer, lost with the crash
// or counted by the failed write. Every other segment has its magic
// written (create).
func (l *Log) openSegment(s *segment) (*os.File, error) {
	var err error
	for range maxReadTries {
		var f *os.File
		if f, err = openFile(s.name(l.dir)); err != nil {
			continue
		}
		if s.size.Load() < int64(len(magic)) {
			return f, nil
		}
		var head [len(magic)]byte
		_, err = readAt(f, head[:], 0)
		switch {
		case err == nil && string(head[:]) == magic:
			return f, nil
		case err == nil || err == io.EOF:
			err = errCorrupt
		}
		f.Close()
		if err == errCorrupt {
			return nil, err
		}
	}
	return nil, err
}

func (l *Log) closeReader() {
	if l.rfile != nil {
		l.rfile.Close()
		l.rfile = nil
	}
	l.rbuf = l.rbuf[:0]
}

// readRecord reads the record at roff: io.EOF when its bytes are not all
// readable yet, errCorrupt for a length over MaxRecordBytes or a checksum
// that does not match, errUnopened when rseg has no file open.
func (l *Log) readRecord() ([]byte, error) {
	if l.rfile == nil {
		return nil, errUnopened
	}
	// The size's load happens after the write(2) of the bytes up to it
	// (flush stores it after): the reads below see them whole.
	limit := l.rseg.size.Load()
	l.rend = limit
	frame, err := l.window(l.roff, frameSize, limit)
	if err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint32(frame)
	sum := binary.LittleEndian.Uint32(frame[4:])
	if int64(n) > int64(l.opts.MaxRecordBytes) {
		return nil, errCorrupt
	}
	crc := crc32.Update(0, castagnoli, frame[:4])
	p, err := l.window(l.roff+frameSize, int(n), limit)
	if err != nil {
		return nil, err
	}
	if crc32.Update(crc, castagnoli, p) != sum {
		return nil, errCorrupt
	}
	l.roff += frameSize + int64(n)
	return p, nil
}

// window returns n bytes of rseg at off, off+n <= limit, reading them into
// rbuf (or rec, for a record larger than rbuf) as needed: io.EOF when
// they are not all there.
func (l *Log) window(off int64, n int, limit int64) ([]byte, error) {
	if off+int64(n) > limit {
		return nil, io.EOF
	}
	if off >= l.rbufOff && off+int64(n) <= l.rbufOff+int64(len(l.rbuf)) {
		i := off - l.rbufOff
		return l.rbuf[i : i+int64(n)], nil
	}
	if n > readSize {
		if cap(l.rec) < n {
			l.rec = make([]byte, n)
		}
		l.rec = l.rec[:n]
		if _, err := readAt(l.rfile, l.rec, off); err != nil {
			return nil, err
		}
		return l.rec, nil
	}
	if l.rbuf == nil {
		l.rbuf = make([]byte, 0, readSize)
	}
	size := int(min(int64(readSize), limit-off))
	l.rbuf = l.rbuf[:size]
	if _, err := readAt(l.rfile, l.rbuf, off); err != nil {
		l.rbuf = l.rbuf[:0]
		return nil, err
	}
	l.rbufOff = off
	return l.rbuf[:n], nil
}

// Done marks every record Next has returned as done and removes the
// segments whose records are all done, which gives their bytes back to
// the budget: MarkDone, then Reclaim. The next Sync records the position.
func (l *Log) Done() error {
	if err := l.MarkDone(); err != nil {
		return err
	}
	return l.Reclaim()
}

// MarkDone marks every record Next has returned as done, as Done does,
// and takes the segments whose records are all done out of the Log
// without touching the disk: their files wait for Reclaim, and their
// bytes count against the budget until then. Removing a file can take
// the file system milliseconds (11 to 23 ms for a 64 MiB segment, in
// traces of slogsink's stalled-pipe probe with a spill directory on the
// project's 2-core VM: go test -trace, -bench
// 'KeepWait$/stall=1s/keepwait=1ms/spill$' ./slogsink/): a caller that
// holds a lock that appends wait for calls MarkDone under it and Reclaim
// after it lets go.
func (l *Log) MarkDone() error {
	if l.rseg == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return ErrClosed
	}
	l.doneID, l.doneOff = l.rseg.id, uint64(l.roff)
	if l.rseg.sealed.Load() && l.roff >= l.rseg.size.Load() {
		// Read to its end, and no append goes into it any more: it goes
		// too, and the reader starts afresh from the next one. Kept, it
		// would hold its bytes until a next segment exists, which a
		// budget of one segment never lets come.
		l.doneID, l.doneOff = l.rseg.id+1, 0
		l.closeReader()
		l.rseg = nil
	}
	for len(l.segs) > 0 && l.segs[0].id < l.doneID {
		l.dead = append(l.dead, l.detachFirst())
	}
	return nil
}

// Reclaim removes the files of the segments that MarkDone took out and
// gives their bytes back to the budget. It takes the Log's lock only to
// take that list, so that appends, reads and Syncs go on while the file
// system frees the files. Any goroutine may call it, at any time; Close
// reclaims what is left. A file that cannot be removed stays for the
// next call, its bytes still counted.
func (l *Log) Reclaim() error {
	l.mu.Lock()
	dead := l.dead
	l.dead = nil
	l.mu.Unlock()
	var freed int64
	var err error
	for i, d := range dead {
		if d.f != nil {
			_ = d.f.Close()
			dead[i].f = nil
		}
		if rerr := os.Remove(d.seg.name(l.dir)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			l.mu.Lock()
			l.dead = append(dead[i:], l.dead...)
			l.mu.Unlock()
			err = rerr
			break
		}
		freed += d.seg.size.Load()
	}
	if freed > 0 {
		l.mu.Lock()
		l.dirDirty = true
		l.mu.Unlock()
		l.bytes.Add(-freed)
	}
	return err
}

// detachFirst takes the oldest segment out of segs, with its file when a
// Sync still owes it an fsync (none is owed once it is removed). l.mu is
// held.
func (l *Log) detachFirst() sealedFile {
	d := sealedFile{seg: l.segs[0]}
	l.segs = l.segs[1:]
	for i, sf := range l.unsynced {
		if sf.seg == d.seg {
			d.f = sf.f
			l.unsynced = slices.Delete(l.unsynced, i, i+1)
			break
		}
	}
	return d
}

// Stats returns the Log's figures.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	segs := len(l.segs) + len(l.dead)
	l.mu.Unlock()
	return Stats{
		Bytes:     l.bytes.Load(),
		Segments:  segs,
		Appended:  l.appended.Load(),
		Read:      l.read.Load(),
		Recovered: l.recovered.Load(),
		Corrupt:   l.corrupt.Load(),
		Lost:      l.lost.Load(),
	}
}

// Close syncs the Log, closes its files and releases the directory. When
// every record has been read and marked done, no segment is left: the
// last one, which took appends and so was never deleted by Done, goes
// too, and the directory keeps only the cursor and the lock file.
func (l *Log) Close() error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.mu.Lock()
	if l.closed.Load() {
		l.mu.Unlock()
		return ErrClosed
	}
	l.retireLast()
	err := l.sync(true)
	if l.w != nil {
		_ = l.w.Close()
		l.w = nil
	}
	l.closed.Store(true)
	l.mu.Unlock()
	l.closeReader()
	// The cursor just synced is past the dead segments: their files go
	// while the directory is still this Log's.
	if rerr := l.Reclaim(); rerr != nil && err == nil {
		err = rerr
	}
	l.release()
	return err
}

// retireLast takes the last segment out for Reclaim, at Close, when every
// record in it is done and the buffer holds none: a segment still taking
// appends stays after its records are done (MarkDone takes out only a
// sealed one), and a Log that closed with it left records that were read
// and marked done on the disk. The done position moves past it, for the
// cursor that Close's sync writes before Reclaim removes the file: a Log
// opened afterwards numbers its first segment after it (and, had a crash
// kept the file, takes it for done), and never reads a new segment of the
// same number from the old position. Done before it, the segments before
// it are out already. l.mu is held.
func (l *Log) retireLast() {
	if len(l.segs) != 1 || l.bufRecords != 0 {
		return
	}
	last := l.segs[0]
	// A done position at the start of the segment is past its magic.
	if l.doneID != last.id || max(int64(l.doneOff), int64(len(magic))) < last.size.Load() {
		return
	}
	if l.w != nil {
		_ = l.w.Close()
		l.w = nil
	}
	last.sealed.Store(true)
	l.doneID, l.doneOff = last.id+1, 0
	l.dead = append(l.dead, l.detachFirst())
}

// release closes the lock file and forgets the directory.
func (l *Log) release() {
	if l.lock != nil {
		l.lock.Close()
		l.lock = nil
	}
	held.Lock()
	delete(held.dirs, l.dir)
	held.Unlock()
}
