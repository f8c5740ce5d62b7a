package logsink_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardedsink/shardedsink/logsink"
)

// A destination that stalls for longer than the loggers take loses
// nothing with a spill directory: 8 goroutines, each with a Stream, log
// 3,000 records (one in 100 at ERROR) while every Write blocks, 24 times
// what the rings hold; once the destination comes back every record is
// written, once, in order per Stream, and the counts add up.
func TestAStalledDestinationLosesNothingWithASpillDir(t *testing.T) {
	dst := &lockedWriter{gate: make(chan struct{})}
	w, err := logsink.New(dst, &logsink.Options{Buffering: logsink.Buffering{Shards: 2, RingCapacity: 128, BatchSize: 16, SpillDir: t.TempDir(), SpillBytes: 64 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, each = 8, 3000
	var wg sync.WaitGroup
	for g := range goroutines {
		s := w.Stream()
		wg.Go(func() {
			for i := range each {
				l := slog.LevelInfo
				if i%100 == 99 {
					l = slog.LevelError
				}
				_, _ = s.WriteLevel(l, fmt.Appendf(nil, "%d %d\n", g, i))
			}
		})
	}
	wg.Wait()
	st := w.Stats()
	if st.Dropped != 0 || st.Spilled == 0 {
		t.Fatalf("while the destination stalled: %+v, want nothing dropped and records spilled", st)
	}
	close(dst.gate)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	next := make([]int, goroutines)
	lines := bufio.NewScanner(bytes.NewReader(dst.b.Bytes()))
	for lines.Scan() {
		var g, i int
		if _, err := fmt.Sscanf(lines.Text(), "%d %d", &g, &i); err != nil {
			t.Fatalf("a line %q", lines.Text())
		}
		if i != next[g] {
			t.Fatalf("goroutine %d: record %d after %d", g, i, next[g]-1)
		}
		next[g]++
	}
	for g, n := range next {
		if n != each {
			t.Fatalf("goroutine %d: %d records written, want %d", g, n, each)
		}
	}
	st = w.Stats()
	if st.Written != goroutines*each || st.Dropped != 0 || st.LostOnDisk != 0 || st.OnDisk != 0 || st.Spilled == 0 {
		t.Fatalf("after Close: %+v", st)
	}
	t.Logf("spilled %d of %d records", st.Spilled, st.Written)
}

// A Close whose ctx ends while the destination stalls leaves the records
// on disk, and a Writer started on the directory writes them first, in
// order, counted as Recovered: Written - Recovered + OnDisk adds up
// across the two.
func TestAWriterWritesWhatTheLastOneLeftOnDisk(t *testing.T) {
	dir := t.TempDir()
	stalled := &lockedWriter{gate: make(chan struct{})}
	w, err := logsink.New(stalled, &logsink.Options{Buffering: logsink.Buffering{Shards: 1, RingCapacity: 64, BatchSize: 16, SpillDir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	s := w.Stream()
	for i := range n {
		_, _ = s.Write(fmt.Appendf(nil, "%d\n", i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := w.Close(ctx); err == nil {
		t.Fatal("Close returned nil while the destination stalled")
	}
	close(stalled.gate) // the Write in progress returns: its batch is written
	<-w.Done()
	first := w.Stats()
	if first.Dropped != 0 || first.OnDisk == 0 {
		t.Fatalf("first Writer: %+v, want nothing dropped and records on disk", first)
	}

	dst := &lockedWriter{gate: make(chan struct{})}
	close(dst.gate)
	w2, err := logsink.New(dst, &logsink.Options{Buffering: logsink.Buffering{Shards: 1, SpillDir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w2.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	second := w2.Stats()
	if second.Recovered != uint64(first.OnDisk) || second.Written != second.Recovered {
		t.Fatalf("second Writer: %+v, want the %d records the first left", second, first.OnDisk)
	}
	lines := bufio.NewScanner(bytes.NewReader(dst.b.Bytes()))
	want := n - first.OnDisk
	for lines.Scan() {
		if lines.Text() != fmt.Sprint(want) {
			t.Fatalf("record %q, want %d", lines.Text(), want)
		}
		want++
	}
	if want != n {
		t.Fatalf("the second Writer wrote up to %d, want %d", want, n)
	}
}

// pacedWriter is a destination whose Writes take a millisecond each.
type pacedWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (p *pacedWriter) Write(b []byte) (int, error) {
	time.Sleep(time.Millisecond)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.b.Write(b)
}

func (p *pacedWriter) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.b.String()
}

// Flush waits for the records written before it while a Writer writes
// what an earlier one left on disk first: they are behind those, and
// Flush returns once they are written (before, the sink's Flush returned
// after the first batches of the recovered records, the new one not
// written).
func TestFlushWaitsForARecordBehindWhatTheLastWriterLeft(t *testing.T) {
	dir := t.TempDir()
	stalled := &lockedWriter{gate: make(chan struct{})}
	w, err := logsink.New(stalled, &logsink.Options{Buffering: logsink.Buffering{Shards: 1, RingCapacity: 64, BatchSize: 16, SpillDir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	s := w.Stream()
	for i := range 1000 {
		_, _ = s.Write(fmt.Appendf(nil, "%d\n", i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := w.Close(ctx); err == nil {
		t.Fatal("Close returned nil while the destination stalled")
	}
	close(stalled.gate)
	<-w.Done()
	left := w.Stats().OnDisk
	if left < 500 {
		t.Fatalf("the first Writer left %d records on disk, want most of 1000", left)
	}

	dst := &pacedWriter{}
	w2, err := logsink.New(dst, &logsink.Options{Buffering: logsink.Buffering{Shards: 1, BatchSize: 16, SpillDir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := w2.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	if _, err := w2.Stream().Write([]byte("new\n")); err != nil {
		t.Fatal(err)
	}
	fctx, fcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer fcancel()
	if err := w2.Flush(fctx); err != nil {
		t.Fatal(err)
	}
	if out := dst.String(); !strings.HasSuffix(out, "new\n") {
		t.Fatalf("Flush returned with %d of the %d recovered records written, and not the new one", strings.Count(out, "\n"), left)
	}
}
