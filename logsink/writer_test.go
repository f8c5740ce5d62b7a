package logsink_test

import (
	"bytes"
	"context"
	"errors"
	"log"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/logsink/frontend"
)

// The standard log package writes each line in one Write: through a
// Writer the destination gets the bytes it gets from log into a buffer.
func TestTheLogPackageThroughAWriterWritesItsOwnBytes(t *testing.T) {
	var want, got bytes.Buffer
	w, err := logsink.New(&got, nil)
	if err != nil {
		t.Fatal(err)
	}
	direct, async := log.New(&want, "app: ", log.Lmsgprefix), log.New(w, "app: ", log.Lmsgprefix)
	for i := range 1000 {
		direct.Printf("request %d served", i)
		async.Printf("request %d served", i)
	}
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatalf("got %.200q, want %.200q", got.String(), want.String())
	}
	if n := w.Written(); n != 1000 {
		t.Fatalf("Written = %d, want 1000", n)
	}
}

// Write returns len(p), nil whatever becomes of the record: a logger that
// reports failed Writes does not report the drops the stream reports.
func TestWriteAlwaysReturnsTheLength(t *testing.T) {
	w, err := logsink.New(&bytes.Buffer{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := w.Write([]byte("x\n")); n != 2 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, err := w.Write([]byte("after\n")); n != 6 || err != nil {
		t.Fatalf("Write after Close = %d, %v", n, err)
	}
	if st := w.Stats(); st.Written != 1 || st.Dropped != 1 {
		t.Fatalf("Stats = %+v, want 1 written and the Write after Close dropped", st)
	}
	if err := w.Flush(context.Background()); !errors.Is(err, logsink.ErrClosed) {
		t.Fatalf("Flush after Close = %v, want ErrClosed", err)
	}
}

func TestNewNamesEveryBadOption(t *testing.T) {
	_, err := logsink.New(nil, &logsink.Options{Buffering: logsink.Buffering{Shards: -1, RingCapacity: -2, BatchSize: -3}})
	if !errors.Is(err, logsink.ErrInvalidOptions) {
		t.Fatalf("New = %v, want ErrInvalidOptions", err)
	}
	for _, want := range []string{"w = nil", "Shards = -1", "RingCapacity = -2", "BatchSize = -3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not name %s", err, want)
		}
	}
}

// A Report that panics costs its report only: counted in Panics, the
// records it counted stay in Dropped, and the Writer goes on.
func TestAReportThatPanicsIsCounted(t *testing.T) {
	gate := make(chan struct{})
	var dst lockedWriter
	dst.gate = gate
	var logged bytes.Buffer
	w, err := frontend.New(&dst, &logsink.Options{
		Buffering: logsink.Buffering{Shards: 1, RingCapacity: 8},
		Logger:    slog.New(slog.NewTextHandler(&logged, nil)),
	}, func(frontend.Drops) *frontend.Record { panic("boom") })
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		_, _ = w.Write([]byte("rec\n"))
	}
	close(gate)
	_, _ = w.Write([]byte("after\n"))
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := w.Stats()
	if st.Panics == 0 || st.Dropped == 0 || st.Written+st.Dropped != 101 {
		t.Fatalf("Stats = %+v", st)
	}
	if !strings.Contains(logged.String(), "logsink: Report panicked") {
		t.Fatalf("the Logger got %q", logged.String())
	}
}

// OnError runs outside the Writer's locks: it may call Flush, which
// waits for the drain worker that met the error.
func TestOnErrorRunsOutsideTheLocks(t *testing.T) {
	var w *logsink.Writer
	var mu sync.Mutex
	var errs []error
	w, err := logsink.New(failing{}, &logsink.Options{
		Buffering: logsink.Buffering{Shards: 1},
		OnError: func(err error) {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			_ = w.Stats()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write([]byte("rec\n"))
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(errs) != 1 || !errors.Is(errs[0], errFailing) || w.Errors() != 1 {
		t.Fatalf("OnError got %v, Errors = %d", errs, w.Errors())
	}
}

var errFailing = errors.New("failing")

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errFailing }

type lockedWriter struct {
	gate chan struct{}
	mu   sync.Mutex
	b    bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	<-l.gate
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
