package logsink_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/logsink/frontend"
	"github.com/shardedsink/shardedsink/sink"
)

// stalledOne returns a Writer of one shard of ring whose destination
// blocks on gate (made in the caller's bubble), with its worker already in
// the Write of one record ("stall"). The ring is empty then; queued counts
// nothing.
func stalledOne(t *testing.T, ring int, opts logsink.Options) (*logsink.Writer, *lockedWriter, chan struct{}) {
	t.Helper()
	gate := make(chan struct{})
	dst := &lockedWriter{gate: gate}
	opts.Shards, opts.RingCapacity, opts.MaxDelay = 1, ring, -1
	w, err := logsink.New(dst, &opts)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.WriteLevel(slog.LevelInfo, []byte("stall\n"))
	synctest.Wait() // the worker is in the Write, blocked on gate
	// A Write that has run sink.SlowDrain is a slow destination: from
	// then on a record that finds its ring full is shed (or waits
	// KeepWait) at once, instead of handing off to the worker.
	time.Sleep(2 * sink.SlowDrain)
	return w, dst, gate
}

// timed returns how long (in the bubble's time) one WriteLevel took.
func timed(w *logsink.Writer, l slog.Level, p []byte) time.Duration {
	start := time.Now()
	_, _ = w.WriteLevel(l, p)
	return time.Since(start)
}

// A WARN record that finds its ring full, reserve included, waits exactly
// KeepWait for room and is then shed, counted in WaitedOut and reported as
// waited out; an INFO record that finds the ring full never waits; a WARN
// record whose room comes during the wait is written. This test fails
// when the wait is removed (the WARN record would return at once).
func TestAWarningWaitsKeepWaitForRoomAndInfoNever(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const keepWait = 5 * time.Millisecond
		w, dst, gate := stalledOne(t, 8, logsink.Options{Buffering: logsink.Buffering{KeepWait: keepWait}})
		for i := range 7 { // seven eighths: the INFO records' part
			_, _ = w.WriteLevel(slog.LevelInfo, fmt.Appendf(nil, "info %d\n", i))
		}
		if d := timed(w, slog.LevelInfo, []byte("info shed\n")); d != 0 {
			t.Fatalf("an INFO record into a full ring waited %v, want no wait", d)
		}
		if d := timed(w, slog.LevelWarn, []byte("warn in the reserve\n")); d != 0 {
			t.Fatalf("a WARN record with room in the reserve waited %v", d)
		}
		if d := timed(w, slog.LevelWarn, []byte("warn waits out\n")); d != keepWait {
			t.Fatalf("a WARN record into a full ring took %v, want exactly KeepWait (%v)", d, keepWait)
		}
		if d := timed(w, slog.LevelInfo, []byte("info shed too\n")); d != 0 {
			t.Fatalf("an INFO record waited %v", d)
		}
		st := w.Stats()
		if st.WaitedOut != 1 || st.Dropped != 3 || st.DroppedByLevel[slog.LevelWarn] != 1 || st.DroppedForBytes != 0 {
			t.Fatalf("Stats = %+v, want 3 dropped, 1 of them (WARN) waited out", st)
		}

		// Room comes 2 ms into the wait: the record is written.
		var waited time.Duration
		done := make(chan struct{})
		go func() {
			defer close(done)
			waited = timed(w, slog.LevelError, []byte("error finds room\n"))
		}()
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		close(gate)
		<-done
		if waited != 2*time.Millisecond {
			t.Fatalf("an ERROR record whose room came after 2 ms took %v", waited)
		}
		if err := w.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		st = w.Stats()
		const begun = 1 + 7 + 1 + 1 + 1 + 1 + 1
		if got := st.Written + st.Dropped + st.Errors + st.Abandoned + st.Empty; got != begun || st.WaitedOut != 1 || st.Dropped != 3 {
			t.Fatalf("Stats = %+v: %d accounted, want %d with 3 dropped, 1 waited out", st, got, begun)
		}
		out := dst.b.String()
		if !strings.Contains(out, "error finds room\n") {
			t.Fatalf("the ERROR record that found room is not in the output:\n%s", out)
		}
		if strings.Contains(out, "warn waits out") {
			t.Fatalf("the WARN record that waited out was written:\n%s", out)
		}
		rep := reports(t, out)
		if rep.dropped != 3 || rep.waitedOut != 1 || rep.waitedByLevel["WARN"] != 1 {
			t.Fatalf("the reports say %+v, want 3 dropped, 1 WARN waited out:\n%s", rep, out)
		}
	})
}

// Close sheds a record waiting for room at once: dropped, not waited out.
// A record at or above KeepLevel after Close waits for nothing.
func TestCloseShedsTheRecordsWaitingForRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const keepWait = time.Second
		w, _, gate := stalledOne(t, 2, logsink.Options{Buffering: logsink.Buffering{KeepWait: keepWait}})
		_, _ = w.WriteLevel(slog.LevelWarn, []byte("a\n"))
		_, _ = w.WriteLevel(slog.LevelWarn, []byte("b\n")) // the ring is full
		var waited time.Duration
		done := make(chan struct{})
		go func() {
			defer close(done)
			waited = timed(w, slog.LevelError, []byte("waits\n"))
		}()
		time.Sleep(time.Millisecond)
		synctest.Wait() // the ERROR record is parked
		closed := make(chan error, 1)
		go func() { closed <- w.Close(context.Background()) }()
		<-done
		if waited != time.Millisecond {
			t.Fatalf("the waiting record took %v, want Close to shed it at once (1 ms)", waited)
		}
		if d := timed(w, slog.LevelError, []byte("after\n")); d != 0 {
			t.Fatalf("a record after Close waited %v", d)
		}
		close(gate)
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		st := w.Stats()
		if st.WaitedOut != 0 || st.Dropped != 2 || st.Written != 3 {
			t.Fatalf("Stats = %+v, want 3 written and 2 dropped, none waited out", st)
		}
	})
}

// A record larger than its shard's share of MaxQueuedBytes is shed at
// once (it could wait for ever), for bytes; one that fits the share waits
// for bytes and is written when they come.
func TestARecordThatCanNeverFitIsShedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		dst := &lockedWriter{gate: gate}
		w, err := logsink.New(dst, &logsink.Options{Buffering: logsink.Buffering{Shards: 1, MaxDelay: -1, MaxQueuedBytes: 1024, KeepWait: time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.WriteLevel(slog.LevelWarn, bytes.Repeat([]byte("s"), 500)) // held by the stalled Write
		synctest.Wait()
		if d := timed(w, slog.LevelWarn, bytes.Repeat([]byte("L"), 2000)); d != 0 {
			t.Fatalf("a record over the share waited %v", d)
		}
		st := w.Stats()
		if st.DroppedForBytes != 1 || st.WaitedOut != 0 {
			t.Fatalf("Stats = %+v, want 1 dropped for bytes", st)
		}
		var waited time.Duration
		done := make(chan struct{})
		go func() {
			defer close(done)
			waited = timed(w, slog.LevelWarn, bytes.Repeat([]byte("m"), 600)) // 500 + 600 > 1024
		}()
		time.Sleep(3 * time.Millisecond)
		synctest.Wait()
		close(gate)
		<-done
		if waited != 3*time.Millisecond {
			t.Fatalf("a record waiting for bytes took %v, want the 3 ms until they came", waited)
		}
		if err := w.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if st := w.Stats(); st.Written != 2 || st.Dropped != 1 {
			t.Fatalf("Stats = %+v, want 2 written, 1 dropped", st)
		}
	})
}

// slowWriter takes d per Write.
type slowWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
	d  time.Duration
}

func (s *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(s.d)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// Loggers of every level into a slow destination, with waits that time
// out and a Close that sheds the last waiters: every record is written or
// counted, and the reports in the stream say what Stats says (-race).
func TestTheCountsAddUpWithWaitedOutRecords(t *testing.T) {
	// Writes slower than sink.SlowDrain: a slow destination, which the
	// loggers do not wait for (but KeepWait).
	dst := &slowWriter{d: 2 * sink.SlowDrain}
	w, err := logsink.New(dst, &logsink.Options{Buffering: logsink.Buffering{Shards: 2, RingCapacity: 64, BatchSize: 8, KeepWait: 300 * time.Microsecond}})
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, each = 8, 2000
	var begun atomic.Uint64
	var wg sync.WaitGroup
	levels := []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError}
	for g := range goroutines {
		s := w.Stream()
		wg.Go(func() {
			for i := range each {
				l := levels[(g+i)%len(levels)]
				_, _ = s.WriteLevel(l, fmt.Appendf(nil, `{"level":%q,"g":%d,"i":%d}`+"\n", l, g, i))
				begun.Add(1)
			}
		})
	}
	// Close while the loggers still log, once a record has waited out (each
	// WARN or ERROR record that finds no room waits 300 µs, so the loggers
	// take far longer than this). Polled, not slept: on a loaded machine
	// (CI runs the packages side by side) 20 ms were once too few for any
	// wait to end before Close.
	for deadline := time.Now().Add(10 * time.Second); w.Stats().WaitedOut == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	closeErr := w.Close(ctx)
	wg.Wait()
	if closeErr != nil {
		t.Fatal(closeErr)
	}
	st := w.Stats()
	if got := st.Written + st.Dropped + st.Errors + st.Abandoned + st.Empty; got != begun.Load() {
		t.Fatalf("Stats = %+v: %d accounted for %d records", st, got, begun.Load())
	}
	if st.WaitedOut == 0 {
		t.Fatalf("Stats = %+v: no record waited out; the test does not test the waits", st)
	}
	if st.WaitedOut > st.DroppedByLevel[slog.LevelWarn]+st.DroppedByLevel[slog.LevelError] {
		t.Fatalf("Stats = %+v: more waited out than WARN and ERROR records dropped", st)
	}
	dst.mu.Lock()
	out := dst.b.String()
	dst.mu.Unlock()
	rep := reports(t, out)
	var afterClose uint64 // dropped after Close: counted, reported nowhere
	if rep.records != st.Written {
		t.Fatalf("%d records in the output, Written = %d", rep.records, st.Written)
	}
	afterClose = st.Dropped - rep.dropped
	if rep.waitedOut != st.WaitedOut {
		t.Fatalf("the reports say %d waited out, Stats %d (%+v)", rep.waitedOut, st.WaitedOut, st)
	}
	t.Logf("%+v; %d dropped after Close", st, afterClose)
}

// reported is what the records and drop reports of an output say.
type reported struct {
	records, dropped, waitedOut uint64
	waitedByLevel               map[string]uint64
}

// reports reads out, one record a line; the drop reports are JSON.
func reports(t *testing.T, out string) reported {
	t.Helper()
	r := reported{waitedByLevel: map[string]uint64{}}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(logsink.DroppedMessage)) {
			r.records++
			continue
		}
		var rep struct {
			Dropped          uint64            `json:"dropped"`
			WaitedOut        uint64            `json:"waited_out"`
			WaitedOutByLevel map[string]uint64 `json:"waited_out_by_level"`
		}
		if err := json.Unmarshal(line, &rep); err != nil {
			t.Fatalf("a drop report that is not JSON: %q: %v", line, err)
		}
		if rep.WaitedOut > rep.Dropped {
			t.Fatalf("a report with more waited out than dropped: %q", line)
		}
		r.dropped += rep.Dropped
		r.waitedOut += rep.WaitedOut
		for k, n := range rep.WaitedOutByLevel {
			r.waitedByLevel[k] += n
		}
	}
	return r
}

// The longest report JSONReport can write (every level's counts of 20
// digits, waited out too) is whole and JSON, past InlineSize or not.
func TestTheLongestReportIsWhole(t *testing.T) {
	const most = ^uint64(0)
	d := frontend.Drops{Total: most, ByLevel: [4]uint64{most, most, most, most}, WaitedOut: most, WaitedOutByLevel: [4]uint64{most, most, most, most}}
	r := frontend.JSONReport(d)
	defer frontend.PutRecord(r)
	line := r.Bytes()
	if len(line) <= frontend.InlineSize {
		t.Fatalf("the longest report is %d bytes: the test does not pass InlineSize", len(line))
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil || !bytes.HasSuffix(line, []byte("}\n")) {
		t.Fatalf("the report %q: %v", line, err)
	}
	if n := testing.AllocsPerRun(100, func() { frontend.PutRecord(frontend.JSONReport(frontend.Drops{Total: 3, ByLevel: [4]uint64{1, 2}})) }); n != 0 {
		t.Fatalf("a report of a few drops allocates %v times", n)
	}
}

// An outsized record holds its shard's share of MaxQueuedBytes behind a
// stalled Write, and a second one is shed for bytes: its drop report is
// pending. Six small records that fit their slots follow, and a WARN:
// each is written, none waits, and the report does not make any of them
// shed (before, the report rode in front of each small record, made it
// need heap bytes the share had not, and had it shed for bytes, and the
// WARN waited its whole KeepWait). The report is written at Close.
func TestAReportNeverMakesASmallRecordShedForBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const share = 4096
		w, dst, gate := stalledOne(t, 64, logsink.Options{Buffering: logsink.Buffering{MaxQueuedBytes: share, KeepWait: time.Second}})
		big := append(bytes.Repeat([]byte("x"), share+100), '\n')
		_, _ = w.WriteLevel(slog.LevelInfo, big) // the shard holds nothing: taken, alone
		_, _ = w.WriteLevel(slog.LevelInfo, big) // the share is spent: shed for bytes
		small := append(bytes.Repeat([]byte("s"), 300), '\n')
		for range 6 {
			if d := timed(w, slog.LevelInfo, small); d != 0 {
				t.Fatalf("a small record waited %v", d)
			}
		}
		if d := timed(w, slog.LevelWarn, small); d != 0 {
			t.Fatalf("a WARN record that fits its slot waited %v", d)
		}
		close(gate)
		if err := w.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		st := w.Stats()
		if st.DroppedForBytes != 1 || st.Dropped != 1 || st.WaitedOut != 0 {
			t.Fatalf("Stats = %+v: want the one outsized record shed for bytes, nothing else", st)
		}
		out := dst.b.String()
		if got := strings.Count(out, string(small)); got != 7 {
			t.Fatalf("%d of the 7 small records written", got)
		}
		if !strings.Contains(out, `"dropped":1`) {
			t.Fatalf("no report of the drop in the stream:\n%.300s", out)
		}
	})
}
