package zerologsink_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/logsink/logsinktest"
	"github.com/shardedsink/shardedsink/zerologsink"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// zlevel maps the contract's slog levels onto zerolog's.
func zlevel(l slog.Level) zerolog.Level {
	switch {
	case l < slog.LevelInfo:
		return zerolog.DebugLevel
	case l < slog.LevelWarn:
		return zerolog.InfoLevel
	case l < slog.LevelError:
		return zerolog.WarnLevel
	default:
		return zerolog.ErrorLevel
	}
}

// logAt logs record i through lg, a logger with a field of its own.
func logAt(lg zerolog.Logger) func(slog.Level, int) {
	return func(l slog.Level, i int) {
		lg.WithLevel(zlevel(l)).Int("i", i).Str("route", "/cart").Msg("request served")
	}
}

func TestWriterContract(t *testing.T) {
	logsinktest.Run(t, logsinktest.Front{
		New: func(t *testing.T, dst io.Writer, o logsink.Options) logsinktest.Subject {
			w, err := zerologsink.New(dst, &zerologsink.Options{Buffering: o.Buffering, KeepLevel: o.KeepLevel})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = w.Close(); <-w.Done() })
			return logsinktest.Subject{
				Log:   logAt(zerolog.New(w).With().Str("svc", "cart").Logger()),
				Close: w.CloseContext, Stats: w.Stats, Done: w.Done,
			}
		},
		Sync: func(t *testing.T, dst io.Writer) func(slog.Level, int) {
			return logAt(zerolog.New(dst).With().Str("svc", "cart").Logger())
		},
		Report: logsinktest.JSONReport(zerologsink.DroppedMessage),
	})
}

// As zerolog's diode test does: an event through the Writer, then Close,
// and the buffer holds zerolog's line.
func TestNewWriter(t *testing.T) {
	var buf bytes.Buffer
	w, err := zerologsink.New(&buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	log := zerolog.New(w)
	log.Print("test")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if want := "{\"level\":\"debug\",\"message\":\"test\"}\n"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

// As zerolog's diode test does, in a child process: a Fatal event reaches
// the destination before zerolog exits, here with a MaxDelay that would
// hold it a second.
func TestFatal(t *testing.T) {
	if os.Getenv("TEST_FATAL") == "1" {
		w, err := zerologsink.New(os.Stderr, &zerologsink.Options{Buffering: logsink.Buffering{MaxDelay: time.Second}})
		if err != nil {
			panic(err)
		}
		log := zerolog.New(w)
		log.Info().Msg("before")
		log.Fatal().Msg("test")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFatal$")
	cmd.Env = append(os.Environ(), "TEST_FATAL=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("the child ended with %v, want exit status 1", err)
	}
	want := "{\"level\":\"info\",\"message\":\"before\"}\n{\"level\":\"fatal\",\"message\":\"test\"}\n"
	if !strings.HasPrefix(stderr.String(), want) {
		t.Fatalf("the child wrote %q, want %q first", stderr.String(), want)
	}
}

// A Panic event is in the destination when zerolog panics.
func TestPanicReachesTheDestinationFirst(t *testing.T) {
	var buf lockedBuffer
	w, err := zerologsink.New(&buf, &zerologsink.Options{Buffering: logsink.Buffering{MaxDelay: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	log := zerolog.New(w)
	defer func() {
		if recover() == nil {
			t.Fatal("Panic did not panic")
		}
		if !strings.Contains(buf.String(), `"message":"oops"`) {
			t.Fatalf("when zerolog panicked the destination held %q", buf.String())
		}
	}()
	log.Panic().Msg("oops")
}

// Close is bounded by CloseTimeout when the destination stalls, and the
// events it left are counted once the destination returns.
func TestCloseIsBounded(t *testing.T) {
	gate := make(chan struct{})
	w, err := zerologsink.New(&gated{gate: gate}, &zerologsink.Options{CloseTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	log := zerolog.New(w)
	for range 10 {
		log.Info().Msg("x")
	}
	start := time.Now()
	if err := w.Close(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close = %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Close took %v", d)
	}
	close(gate)
	<-w.Done()
	st := w.Stats()
	if st.Written+st.Abandoned+st.Errors != 10 {
		t.Fatalf("Stats = %+v, want the 10 events counted", st)
	}
}

// A shed event costs zerolog no error report: WriteLevel returns nil.
func TestAShedEventIsNoWriteError(t *testing.T) {
	var reported []error
	old := zerolog.ErrorHandler
	zerolog.ErrorHandler = func(err error) { reported = append(reported, err) }
	defer func() { zerolog.ErrorHandler = old }()
	gate := make(chan struct{})
	w, err := zerologsink.New(&gated{gate: gate}, &zerologsink.Options{Buffering: logsink.Buffering{Shards: 1, RingCapacity: 8}})
	if err != nil {
		t.Fatal(err)
	}
	log := zerolog.New(w)
	for range 100 {
		log.Info().Msg("x")
	}
	close(gate)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(reported) != 0 || w.Stats().Dropped == 0 {
		t.Fatalf("zerolog reported %v; Stats = %+v", reported, w.Stats())
	}
}

func TestNewNamesEveryBadOption(t *testing.T) {
	_, err := zerologsink.New(nil, &zerologsink.Options{CloseTimeout: -1, Buffering: logsink.Buffering{RingCapacity: -1}})
	if !errors.Is(err, zerologsink.ErrInvalidOptions) {
		t.Fatalf("New = %v", err)
	}
	for _, want := range []string{"CloseTimeout = -1", "dst = nil", "RingCapacity = -1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %s", err, want)
		}
	}
}

type gated struct {
	gate chan struct{}
	lockedBuffer
}

func (g *gated) Write(p []byte) (int, error) {
	<-g.gate
	return g.lockedBuffer.Write(p)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// The drop report is written whatever zerolog's global level: it says
// that events were lost, which the log must say even when it logs errors
// only.
func TestTheDropReportIgnoresTheGlobalLevel(t *testing.T) {
	defer zerolog.SetGlobalLevel(zerolog.GlobalLevel())
	zerolog.SetGlobalLevel(zerolog.ErrorLevel)
	gate := make(chan struct{})
	dst := &gated{gate: gate}
	w, err := zerologsink.New(dst, &zerologsink.Options{Buffering: logsink.Buffering{Shards: 1, RingCapacity: 8}})
	if err != nil {
		t.Fatal(err)
	}
	log := zerolog.New(w)
	for range 100 {
		log.Error().Msg("x")
	}
	close(gate)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	n, ok := uint64(0), false
	for _, line := range strings.Split(strings.TrimSpace(dst.String()), "\n") {
		if k, is := logsinktest.JSONReport(zerologsink.DroppedMessage)([]byte(line)); is {
			n, ok = n+k, true
			if !strings.HasPrefix(line, `{"level":"warn","dropped":`) {
				t.Errorf("the report is %s", line)
			}
		}
	}
	if !ok || n != w.Stats().Dropped || n == 0 {
		t.Fatalf("reports of %d drops (found: %v); Stats = %+v", n, ok, w.Stats())
	}
	// Every error shed waited Options.KeepWait first, and the reports say so.
	if st := w.Stats(); st.WaitedOut != st.Dropped || !strings.Contains(dst.String(), `"waited_out_by_level":{"error":`) {
		t.Fatalf("Stats = %+v; the reports do not say the errors waited out:\n%s", st, dst.String())
	}
}
