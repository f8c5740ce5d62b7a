// Package logsinktest is the contract test kit of logsink's front-ends: a
// logger that writes through a logsink.Writer (slogsink, zapsink,
// zerologsink, or one of your own) runs [Run], which checks what logsink
// promises about the records that reach the destination:
//
//   - byte-exact: with nothing shed, the destination receives the bytes
//     the synchronous logger writes into a buffer, record for record;
//   - every call counted: written + dropped + errors (+ abandoned + empty)
//     == calls, exactly, with a stalled destination, a failing one, and a
//     Close whose ctx ends first;
//   - nothing interleaved: under concurrency every line is one whole
//     record, each record at most once, and the drop reports in the
//     stream sum to Stats.Dropped;
//   - KeepLevel: records at or above it that fit the reserve are kept
//     while the records below it are shed;
//   - the hand-off: a call whose ring is full waits for the drain worker
//     until the Write in progress has run sink.SlowDrain, and with
//     Options.DisableHandOff (which the front-end must pass on) is shed
//     at once.
package logsinktest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/sink"
)

// Subject is a front-end under test, writing into a destination through a
// logsink.Writer.
type Subject struct {
	// Log logs record number i at level l (slog.LevelDebug, LevelInfo,
	// LevelWarn or LevelError): one line, a JSON object with an integer
	// field "i" holding i, the same bytes as Front.Sync's logger writes.
	// It is called from many goroutines at once.
	Log func(l slog.Level, i int)
	// Close closes the front-end within ctx.
	Close func(ctx context.Context) error
	// Stats returns the Writer's counters.
	Stats func() logsink.Stats
	// Done is closed once the Writer's workers have exited.
	Done func() <-chan struct{}
}

// Front describes a front-end to [Run].
type Front struct {
	// New makes the front-end on a Writer into dst with opts (its own
	// options set to these; its drop report is its own).
	New func(t *testing.T, dst io.Writer, opts logsink.Options) Subject
	// Sync makes the synchronous logger into dst whose bytes the
	// front-end's must equal: the same library, configured alike, writing
	// straight into dst.
	Sync func(t *testing.T, dst io.Writer) func(l slog.Level, i int)
	// Report reports whether line (without its newline) is a drop report,
	// and how many records it reports.
	Report func(line []byte) (dropped uint64, ok bool)
}

// levelOf is the level of record i in the runs: one in a thousand at
// ERROR, the rest cycling through DEBUG, INFO and WARN.
func levelOf(i int) slog.Level {
	if i%1000 == 999 {
		return slog.LevelError
	}
	return [...]slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn}[i%3]
}

// Run runs the contract tests against f.
func Run(t *testing.T, f Front) {
	t.Run("ByteExactWhenNothingIsShed", func(t *testing.T) { byteExact(t, f) })
	t.Run("ConcurrentRecordsAreWholeAndCounted", func(t *testing.T) { concurrent(t, f) })
	t.Run("StalledDestinationShedsCountsAndKeepsErrors", func(t *testing.T) { stalled(t, f) })
	t.Run("FailingDestinationCountsErrors", func(t *testing.T) { failing(t, f) })
	t.Run("CloseWithinCtx", func(t *testing.T) { closeWithin(t, f) })
	t.Run("HandOffWaitsUntilTheWriteIsSlowUnlessDisabled", func(t *testing.T) { handOff(t, f) })
}

func byteExact(t *testing.T, f Front) {
	const n = 2000
	var want, got bytes.Buffer
	sync := f.Sync(t, &want)
	for i := range n {
		sync(levelOf(i), i)
	}
	s := f.New(t, &got, logsink.Options{Buffering: logsink.Buffering{Shards: 1}})
	for i := range n {
		s.Log(levelOf(i), i)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("the destination got other bytes than the synchronous logger wrote:\n got %.300q\nwant %.300q", got.Bytes(), want.Bytes())
	}
	st := s.Stats()
	if st.Written != n || st.Dropped != 0 || st.Errors != 0 {
		t.Fatalf("Stats = %+v, want Written %d and nothing else", st, n)
	}
}

// lockedBuffer is a bytes.Buffer that a test may read while it is written.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.b.Bytes())
}

// logFrom logs calls records from each of g goroutines, numbered apart.
func logFrom(s Subject, g, calls int) {
	var wg sync.WaitGroup
	for k := range g {
		wg.Go(func() {
			for j := range calls {
				i := k*calls + j
				s.Log(levelOf(i), i)
			}
		})
	}
	wg.Wait()
}

// parsed is what check found in the destination.
type parsed struct {
	records  int
	reported uint64
	seen     map[int]bool // the i of every record written
}

// check reads out line by line: every line is a drop report or one whole
// record with an "i" seen once.
func check(t *testing.T, f Front, out []byte) parsed {
	t.Helper()
	p := parsed{seen: map[int]bool{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if n, ok := f.Report(line); ok {
			p.reported += n
			continue
		}
		var rec struct {
			I *int `json:"i"`
		}
		if err := json.Unmarshal(line, &rec); err != nil || rec.I == nil {
			t.Fatalf("a line is neither a whole record nor a drop report (interleaved?): %q (%v)", line, err)
		}
		if p.seen[*rec.I] {
			t.Fatalf("record %d written twice", *rec.I)
		}
		p.seen[*rec.I] = true
		p.records++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return p
}

// balance checks that every call is counted once.
func balance(t *testing.T, st logsink.Stats, calls int) {
	t.Helper()
	if sum := st.Written + st.Dropped + st.Errors + st.Abandoned + st.Empty; sum != uint64(calls) {
		t.Fatalf("written %d + dropped %d + errors %d + abandoned %d + empty %d = %d, want the %d calls",
			st.Written, st.Dropped, st.Errors, st.Abandoned, st.Empty, sum, calls)
	}
}

func concurrent(t *testing.T, f Front) {
	const g, calls = 8, 1000
	var dst lockedBuffer
	s := f.New(t, &dst, logsink.Options{Buffering: logsink.Buffering{Shards: 2, RingCapacity: 16384}})
	logFrom(s, g, calls)
	if err := s.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	st := s.Stats()
	balance(t, st, g*calls)
	p := check(t, f, dst.bytes())
	if uint64(p.records) != st.Written || p.reported != st.Dropped {
		t.Fatalf("the destination holds %d records and reports of %d drops; Stats says %d written, %d dropped", p.records, p.reported, st.Written, st.Dropped)
	}
	if st.Dropped != 0 {
		t.Fatalf("%d records dropped into a healthy destination with room for all", st.Dropped)
	}
}

// gated blocks every Write until open is closed.
type gated struct {
	open chan struct{}
	lockedBuffer
}

func (g *gated) Write(p []byte) (int, error) {
	<-g.open
	return g.lockedBuffer.Write(p)
}

func stalled(t *testing.T, f Front) {
	const g, calls = 4, 1000 // 4 records at ERROR: within the reserve of 8
	dst := &gated{open: make(chan struct{})}
	s := f.New(t, dst, logsink.Options{Buffering: logsink.Buffering{Shards: 1, RingCapacity: 64, BatchSize: 16}, KeepLevel: slog.LevelError})
	logFrom(s, g, calls)
	close(dst.open)
	if err := s.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	st := s.Stats()
	balance(t, st, g*calls)
	if st.Dropped == 0 {
		t.Fatal("nothing dropped into a destination stalled for the whole run")
	}
	if n := st.DroppedByLevel[slog.LevelError]; n != 0 {
		t.Fatalf("%d ERROR records dropped; the reserve had room for all", n)
	}
	p := check(t, f, dst.bytes())
	if uint64(p.records) != st.Written || p.reported != st.Dropped {
		t.Fatalf("the destination holds %d records and reports of %d drops; Stats says %d written, %d dropped", p.records, p.reported, st.Written, st.Dropped)
	}
	for i := range g * calls {
		if levelOf(i) == slog.LevelError && !p.seen[i] {
			t.Fatalf("ERROR record %d is not in the destination", i)
		}
	}
}

// handOff logs Info records into a destination that keeps up for a
// record and then stalls, until one is shed, on synctest's clock, so that
// the wait is exact: with the hand-off on, the call that finds the ring
// full parks (the destination's pace is fast: a worker short of CPU, for
// all the sink knows) until the stalled Write has run sink.SlowDrain,
// then is shed; with it off, it is shed at once. Behind a destination
// whose pace is slow, or before any Write has ended, no call waits: the
// sink's own tests show those.
func handOff(t *testing.T, f Front) {
	for _, off := range []bool{false, true} {
		t.Run(fmt.Sprintf("DisableHandOff=%t", off), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				dst := &stallsAfterOne{gated: gated{open: make(chan struct{})}}
				s := f.New(t, dst, logsink.Options{Buffering: logsink.Buffering{Shards: 1, RingCapacity: 64, BatchSize: 16, DisableHandOff: off}})
				s.Log(slog.LevelInfo, 0)
				for s.Stats().Written == 0 { // at once, or after a MaxDelay
					time.Sleep(time.Millisecond)
				}
				// The destination's pace is known, and fast.
				s.Log(slog.LevelInfo, 1)
				for dst.stalled.Load() == 0 {
					time.Sleep(time.Millisecond)
				}
				start := time.Unix(0, dst.stalled.Load()) // the Write stalled
				calls := 2
				for s.Stats().Dropped == 0 {
					s.Log(slog.LevelInfo, calls)
					calls++
				}
				waited := time.Since(start)
				close(dst.open)
				if err := s.Close(context.Background()); err != nil {
					t.Fatalf("Close: %v", err)
				}
				balance(t, s.Stats(), calls)
				if off && waited > time.Millisecond {
					t.Fatalf("with the hand-off off, the calls into a full ring waited %v; want none", waited)
				}
				if !off && (waited < sink.SlowDrain || waited > sink.SlowDrain+time.Millisecond) {
					t.Fatalf("with the hand-off on, the first record was shed after %v; want it to wait until the Write has run sink.SlowDrain (%v)", waited, sink.SlowDrain)
				}
			})
		})
	}
}

// stallsAfterOne is a destination whose first Write returns at once and
// whose later ones wait for open.
type stallsAfterOne struct {
	gated
	wrote   atomic.Bool
	stalled atomic.Int64 // when a Write began to wait for open (UnixNano)
}

func (d *stallsAfterOne) Write(p []byte) (int, error) {
	if d.wrote.CompareAndSwap(false, true) {
		return d.lockedBuffer.Write(p)
	}
	d.stalled.CompareAndSwap(0, time.Now().UnixNano())
	return d.gated.Write(p)
}

// failWrites fails every Write.
type failWrites struct{}

var errBroken = errors.New("logsinktest: the destination is broken")

func (failWrites) Write([]byte) (int, error) { return 0, errBroken }

func failing(t *testing.T, f Front) {
	const g, calls = 4, 500
	s := f.New(t, failWrites{}, logsink.Options{Buffering: logsink.Buffering{Shards: 2}})
	logFrom(s, g, calls)
	if err := s.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	st := s.Stats()
	balance(t, st, g*calls)
	if st.Written != 0 || st.Errors == 0 {
		t.Fatalf("Stats = %+v, want no record written and errors counted", st)
	}
}

func closeWithin(t *testing.T, f Front) {
	const calls = 100
	dst := &gated{open: make(chan struct{})}
	s := f.New(t, dst, logsink.Options{Buffering: logsink.Buffering{Shards: 1}})
	for i := range calls {
		s.Log(slog.LevelInfo, i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := s.Close(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close into a stalled destination returned %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Close took %v past its ctx of 50ms", d)
	}
	close(dst.open)
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the workers did not exit once the destination was released")
	}
	balance(t, s.Stats(), calls)
}

// JSONReport recognises logsink's default drop report (frontend.JSONReport)
// and its like with another message: a JSON object whose "msg" or
// "message" is msg and whose "dropped" is the count.
func JSONReport(msg string) func(line []byte) (uint64, bool) {
	return func(line []byte) (uint64, bool) {
		if !bytes.Contains(line, []byte(msg)) {
			return 0, false
		}
		var r struct {
			Msg     string  `json:"msg"`
			Message string  `json:"message"`
			Dropped *uint64 `json:"dropped"`
		}
		if json.Unmarshal(line, &r) != nil || (r.Msg != msg && r.Message != msg) || r.Dropped == nil {
			return 0, false
		}
		return *r.Dropped, true
	}
}
