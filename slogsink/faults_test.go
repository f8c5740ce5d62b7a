package slogsink_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/sink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// quiet receives the handler's own reports in tests that make it fail on
// purpose.
var quiet = slog.New(slog.DiscardHandler)

// bounded returns a ctx that ends after d, cancelled when the test ends.
func bounded(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// panicky is a writer that panics on the Writes for which boom returns
// true and records the others.
type panicky struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	boom func(p []byte) bool
}

func (w *panicky) Write(p []byte) (int, error) {
	if w.boom(p) {
		panic("writer: boom")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *panicky) lines() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Count(w.buf.Bytes(), []byte("\n"))
}

func TestAWriterThatPanicsOnceDoesNotWedgeTheHandler(t *testing.T) {
	var once atomic.Bool
	w := &panicky{boom: func([]byte) bool { return once.CompareAndSwap(false, true) }}
	h, err := slogsink.New(w, &slogsink.Options{Buffering: logsink.Buffering{Shards: 1}, Logger: quiet})
	require.NoError(t, err)
	lg := slog.New(h)
	lg.Info("first") // its Write panics
	require.NoError(t, h.Flush(bounded(t, 5*time.Second)))
	lg.Info("second")
	require.NoError(t, h.Flush(bounded(t, 5*time.Second)), "a Write after the panic must not wait for a lock nobody holds")
	require.NoError(t, h.Close(bounded(t, 5*time.Second)))
	require.Equal(t, 1, w.lines())
	require.Equal(t, uint64(1), h.Written())
	require.Equal(t, uint64(2), h.Written()+h.Dropped()+h.Errors(), "the lost record is counted")
}

func TestAnOnErrorThatPanicsDoesNotWedgeTheHandler(t *testing.T) {
	got := writes{fail: errDiskFull}
	h, err := slogsink.New(&got, &slogsink.Options{Buffering: logsink.Buffering{Shards: 1}, Logger: quiet, OnError: func(error) { panic("OnError: boom") }})
	require.NoError(t, err)
	lg := slog.New(h)
	lg.Info("first")
	require.NoError(t, h.Flush(bounded(t, 5*time.Second)))
	lg.Info("second")
	require.NoError(t, h.Flush(bounded(t, 5*time.Second)))
	require.NoError(t, h.Close(bounded(t, 5*time.Second)))
	require.Equal(t, uint64(2), h.Errors())
}

func TestAReplaceAttrThatPanicsCostsOnlyItsRecord(t *testing.T) {
	var got writes
	boom := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == "boom" {
			panic("ReplaceAttr: boom")
		}
		return a
	}
	h, err := slogsink.New(&got, &slogsink.Options{Buffering: logsink.Buffering{Shards: 1}, ReplaceAttr: boom, Logger: quiet})
	require.NoError(t, err)
	lg := slog.New(h)
	for i := range 100 {
		if i == 50 {
			lg.Info("bad", "boom", true)
			continue
		}
		lg.Info("good", "i", i)
	}
	require.NoError(t, h.Close(bounded(t, 5*time.Second)))
	require.Len(t, got.lines(), 99, "the other records of the batch are written")
	require.Equal(t, uint64(99), h.Written())
	require.Equal(t, uint64(100), h.Written()+h.Dropped()+h.Errors(), "the bad record is counted")
}

func TestNewRefusesOptionsBeyondTheSinksLimits(t *testing.T) {
	for _, o := range []struct {
		opts slogsink.Options
		want string
	}{
		{slogsink.Options{Buffering: logsink.Buffering{Shards: sink.MaxShards + 1}}, "Shards = 1025"},
		{slogsink.Options{Buffering: logsink.Buffering{RingCapacity: sink.MaxRingCapacity + 1}}, "RingCapacity = 16777217"},
	} {
		_, err := slogsink.New(io.Discard, &o.opts)
		require.ErrorIs(t, err, slogsink.ErrInvalidOptions, "%+v", o.opts)
		require.Contains(t, err.Error(), o.want)
	}
}

func TestNewRefusesAFormatThatReturnsNil(t *testing.T) {
	_, err := slogsink.New(io.Discard, &slogsink.Options{Format: func(io.Writer, *slog.HandlerOptions) slog.Handler { return nil }})
	require.ErrorIs(t, err, slogsink.ErrInvalidOptions)
	require.Contains(t, err.Error(), "Format")
}

func TestAWriterThatPanicsOnTheFinalDropReportDoesNotReachClose(t *testing.T) {
	// The writer is held until the rings have shed; Close then writes the
	// drop report itself, and that Write panics.
	gate := make(chan struct{})
	w := &panicky{boom: func(p []byte) bool {
		<-gate
		return bytes.Contains(p, []byte(slogsink.DroppedMessage))
	}}
	h, err := slogsink.New(w, &slogsink.Options{Buffering: logsink.Buffering{Shards: 1, RingCapacity: 4, BatchSize: 1}, Logger: quiet})
	require.NoError(t, err)
	lg := slog.New(h)
	for i := range 100 {
		lg.Info("r", "i", i)
	}
	require.Positive(t, h.Dropped())
	close(gate)
	var panicked any
	func() {
		defer func() { panicked = recover() }()
		_ = h.Close(bounded(t, 5*time.Second))
	}()
	require.Nil(t, panicked, "Close's caller saw the writer's panic")
	err = h.Close(bounded(t, 5*time.Second))
	require.False(t, errors.Is(err, context.DeadlineExceeded), "a second Close hung: %v", err)
}

func TestFlushRacingCloseLeavesNoDropReportBehind(t *testing.T) {
	// Every drop counted before Close is reported in the stream once Close
	// has returned nil, whatever a Flush running at the same time did.
	for round := range 200 {
		got := writes{gate: make(chan struct{})}
		h, err := slogsink.New(&got, &slogsink.Options{Buffering: logsink.Buffering{Shards: 1, RingCapacity: 2, BatchSize: 1}, Logger: quiet})
		require.NoError(t, err)
		lg := slog.New(h)
		for i := range 10 {
			lg.Info("r", "i", i)
		}
		close(got.gate)
		var wg sync.WaitGroup
		wg.Go(func() { _ = h.Flush(bounded(t, 5*time.Second)) })
		require.NoError(t, h.Close(bounded(t, 5*time.Second)))
		wg.Wait()
		_, reported := tally(parse(t, got.lines()))
		require.Equal(t, h.Dropped(), reported, "round %d", round)
	}
}

func TestAWriterThatCallsGoexitOnTheFinalDropReportDoesNotEndClosesCaller(t *testing.T) {
	// Found by TestSoak: Close wrote the last drop report on its caller's
	// goroutine, so a writer that called runtime.Goexit ended the caller.
	gate := make(chan struct{})
	w := &goexiter{gate: gate}
	h, err := slogsink.New(w, &slogsink.Options{Buffering: logsink.Buffering{Shards: 1, RingCapacity: 4, BatchSize: 1}, Logger: quiet})
	require.NoError(t, err)
	lg := slog.New(h)
	for i := range 100 {
		lg.Info("r", "i", i)
	}
	require.Positive(t, h.Dropped())
	close(gate)
	returned := make(chan error, 1)
	go func() { returned <- h.Close(bounded(t, 5*time.Second)) }()
	select {
	case err := <-returned:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Close's caller did not return")
	}
	require.Positive(t, h.Stats().Panics)
}

// goexiter calls runtime.Goexit in every Write that carries a drop report,
// once gate is closed.
type goexiter struct{ gate chan struct{} }

func (w *goexiter) Write(p []byte) (int, error) {
	<-w.gate
	if bytes.Contains(p, []byte(slogsink.DroppedMessage)) {
		runtime.Goexit()
	}
	return len(p), nil
}

// failing is a Format handler whose Handle fails for records whose message
// is "fail" and writes the others as JSON.
type failing struct{ slog.Handler }

var errFormat = errors.New("format: refused")

func (f failing) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "fail" {
		return errFormat
	}
	return f.Handler.Handle(ctx, r)
}
func (f failing) WithAttrs(as []slog.Attr) slog.Handler { return failing{f.Handler.WithAttrs(as)} }
func (f failing) WithGroup(g string) slog.Handler       { return failing{f.Handler.WithGroup(g)} }

func TestAFormatErrorCostsItsRecordAndReachesOnError(t *testing.T) {
	var got writes
	var seen []error
	var mu sync.Mutex
	h, err := slogsink.New(&got, &slogsink.Options{
		Buffering: logsink.Buffering{Shards: 1},
		Logger:    quiet,
		Format:    func(w io.Writer, o *slog.HandlerOptions) slog.Handler { return failing{slog.NewJSONHandler(w, o)} },
		OnError: func(err error) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, err)
		},
	})
	require.NoError(t, err)
	lg := slog.New(h).With("k", 1)
	lg.Info("ok")
	lg.Info("fail")
	lg.Info("ok")
	require.NoError(t, h.Close(bounded(t, 5*time.Second)))
	st := h.Stats()
	require.Equal(t, uint64(2), st.Written)
	require.Equal(t, uint64(1), st.Errors)
	require.Zero(t, st.Panics)
	require.Equal(t, []error{errFormat}, seen)
	require.Len(t, got.lines(), 2)
}
