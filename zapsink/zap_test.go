package zapsink_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/buffer"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/zapsink"
)

// newCore makes a Core into dst that the test closes.
func newCore(t *testing.T, dst zapcore.WriteSyncer, o *zapsink.Options) *zapsink.Core {
	t.Helper()
	core, err := zapsink.NewCore(encoder(), dst, zapcore.DebugLevel, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = core.Close(context.Background()); <-core.Done() })
	return core
}

// zap's observer sees, through a tee, the entries whose lines the Core
// writes into zaptest's Buffer: every entry, with its message and fields,
// in order.
func TestTheObserverAndTheDestinationAgree(t *testing.T) {
	obsCore, logs := observer.New(zapcore.DebugLevel)
	var buf zaptest.Buffer
	core := newCore(t, &buf, &zapsink.Options{Buffering: logsink.Buffering{Shards: 1}})
	lg := zap.New(zapcore.NewTee(core, obsCore)).With(zap.String("svc", "cart"))
	for i := range 200 {
		lg.Info("served", zap.Int("i", i))
		lg.Warn("slow", zap.Int("i", i), zap.Duration("took", time.Duration(i)*time.Millisecond))
	}
	require(t, lg.Sync())
	lines := buf.Lines()
	entries := logs.AllUntimed()
	if len(lines) != len(entries) || len(lines) != 400 {
		t.Fatalf("%d lines, %d observed entries, want 400 each", len(lines), len(entries))
	}
	for k, e := range entries {
		var got map[string]any
		require(t, json.Unmarshal([]byte(lines[k]), &got))
		ctx := e.ContextMap()
		if got["msg"] != e.Message || got["level"] != e.Level.String() || got["svc"] != ctx["svc"] || got["i"] != float64(ctx["i"].(int64)) {
			t.Fatalf("line %d %q does not match the observed entry %+v", k, lines[k], e)
		}
	}
}

// A Fatal entry is in the destination before zap's fatal hook runs (where
// zap would exit), even with a MaxDelay that would hold it a second: the
// Core syncs after every entry above ErrorLevel.
func TestFatalAndPanicReachTheDestinationFirst(t *testing.T) {
	var buf zaptest.Buffer
	core := newCore(t, &buf, &zapsink.Options{Buffering: logsink.Buffering{MaxDelay: time.Second}})
	var atHook string
	lg := zap.New(core, zap.WithFatalHook(hookFunc(func() { atHook = buf.String() })))
	lg.Fatal("the end", zap.Int("code", 3))
	if !strings.Contains(atHook, `"msg":"the end"`) {
		t.Fatalf("at the fatal hook the destination held %q", atHook)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("Panic did not panic")
			}
			if !strings.Contains(buf.String(), `"msg":"oops"`) {
				t.Fatalf("when zap panicked the destination held %q", buf.String())
			}
		}()
		lg.Panic("oops")
	}()
}

type hookFunc func()

func (h hookFunc) OnWrite(*zapcore.CheckedEntry, []zapcore.Field) { h() }

// Sync is bounded: with the destination stalled it returns within
// SyncTimeout with an error, and logging goes on without waiting.
func TestSyncIsBounded(t *testing.T) {
	gate := make(chan struct{})
	dst := &stalled{gate: gate}
	core := newCore(t, dst, &zapsink.Options{SyncTimeout: 50 * time.Millisecond})
	lg := zap.New(core)
	lg.Info("one")
	start := time.Now()
	err := lg.Sync()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Sync into a stalled destination = %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Sync took %v", d)
	}
	close(gate)
	require(t, lg.Sync())
}

type stalled struct {
	gate chan struct{}
	mu   sync.Mutex
	b    bytes.Buffer
}

func (s *stalled) Write(p []byte) (int, error) {
	<-s.gate
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *stalled) Sync() error { return nil }

// With encodes its fields once, when it is called, as zapcore does: a
// value changed afterwards is written as it was.
func TestWithEncodesItsFieldsOnce(t *testing.T) {
	var buf zaptest.Buffer
	core := newCore(t, &buf, nil)
	n := &counter{v: 1}
	lg := zap.New(core).With(zap.Object("n", n))
	n.v = 2
	lg.Info("a")
	lg.Info("b")
	require(t, lg.Sync())
	if n.calls != 1 {
		t.Fatalf("the With field was marshalled %d times, want once", n.calls)
	}
	for _, l := range buf.Lines() {
		if !strings.Contains(l, `"n":{"v":1}`) {
			t.Fatalf("line %q", l)
		}
	}
}

type counter struct{ v, calls int }

func (c *counter) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	c.calls++
	enc.AddInt("v", c.v)
	return nil
}

// An encoder that fails or panics costs its record, counted in Errors
// (a panic in Panics too), and zap gets the error, which it reports on its
// ErrorOutput; the next record is written.
func TestAFailingEncoderIsCounted(t *testing.T) {
	var buf, errOut zaptest.Buffer
	core, err := zapsink.NewCore(badEncoder{encoder()}, &buf, zapcore.DebugLevel, &zapsink.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer core.Close(context.Background())
	lg := zap.New(core, zap.ErrorOutput(&errOut))
	lg.Info("fail")
	lg.Info("panic")
	lg.Info("good")
	require(t, lg.Sync())
	st := core.Stats()
	if st.Written != 1 || st.Errors != 2 || st.Panics != 1 {
		t.Fatalf("Stats = %+v, want 1 written, 2 errors, 1 panic", st)
	}
	if !strings.Contains(errOut.String(), "cannot encode") || !strings.Contains(errOut.String(), "the encoder panicked") {
		t.Fatalf("zap's ErrorOutput got %q", errOut.String())
	}
	if lines := buf.Lines(); len(lines) != 1 || !strings.Contains(lines[0], "good") {
		t.Fatalf("the destination got %q", lines)
	}
}

// badEncoder fails on the message "fail" and panics on "panic".
type badEncoder struct{ zapcore.Encoder }

func (e badEncoder) Clone() zapcore.Encoder { return badEncoder{e.Encoder.Clone()} }

func (e badEncoder) EncodeEntry(ent zapcore.Entry, f []zapcore.Field) (*buffer.Buffer, error) {
	switch ent.Message {
	case "fail":
		return nil, errors.New("cannot encode")
	case "panic":
		panic("boom")
	}
	return e.Encoder.EncodeEntry(ent, f)
}

// Every bad argument and field is named in one error, zapsink's and
// logsink's alike (before, NewCore named only enc, enab and SyncTimeout
// when they were bad, and NewWriteSyncer only SyncTimeout).
func TestNewCoreNamesEveryBadArgument(t *testing.T) {
	_, err := zapsink.NewCore(nil, nil, nil, &zapsink.Options{Buffering: logsink.Buffering{Shards: -1, RingCapacity: -2}, SyncTimeout: -1})
	if !errors.Is(err, zapsink.ErrInvalidOptions) {
		t.Fatalf("NewCore = %v", err)
	}
	for _, want := range []string{"enc = nil", "enab = nil", "SyncTimeout = -1", "dst = nil", "Shards = -1", "RingCapacity = -2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %s", err, want)
		}
	}
	_, err = zapsink.NewCore(encoder(), nil, zapcore.InfoLevel, &zapsink.Options{Buffering: logsink.Buffering{Shards: -1}})
	for _, want := range []string{"dst = nil", "Shards = -1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v does not name %s", err, want)
		}
	}
	_, err = zapsink.NewWriteSyncer(nil, &zapsink.Options{SyncTimeout: -time.Second, Buffering: logsink.Buffering{Shards: -1, BatchSize: -3}})
	if !errors.Is(err, zapsink.ErrInvalidOptions) {
		t.Fatalf("NewWriteSyncer = %v", err)
	}
	for _, want := range []string{"SyncTimeout = -1s", "dst = nil", "Shards = -1", "BatchSize = -3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %s", err, want)
		}
	}
}

func TestJSONLevel(t *testing.T) {
	for in, want := range map[string]zapcore.Level{
		`{"level":"error","msg":"x"}`: zapcore.ErrorLevel,
		`{"level":"WARN","msg":"x"}`:  zapcore.WarnLevel,
		`{"level":"fatal"}`:           zapcore.FatalLevel,
		`{"msg":"no level"}`:          zapcore.InfoLevel,
		`{"level":"nonsense"}`:        zapcore.InfoLevel,
		`{"level":"unterminated`:      zapcore.InfoLevel,
	} {
		if got := zapsink.JSONLevel([]byte(in)); got != want {
			t.Errorf("JSONLevel(%s) = %v, want %v", in, got, want)
		}
	}
}

func require(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Errors into a full ring wait Options.KeepWait and are then shed: Stats
// counts them in WaitedOut, and the drop report, encoded by the encoder,
// says how many waited out, by zap's level names. Info entries never wait.
func TestErrorsWaitOutAndTheReportSaysSo(t *testing.T) {
	gate := make(chan struct{})
	dst := &stalled{gate: gate}
	const keepWait = 2 * time.Millisecond
	core, err := zapsink.NewCore(encoder(), dst, zapcore.DebugLevel, &zapsink.Options{Buffering: logsink.Buffering{Shards: 1, RingCapacity: 8, KeepWait: keepWait}})
	if err != nil {
		t.Fatal(err)
	}
	lg := zap.New(core)
	for range 20 {
		lg.Info("filler")
	}
	start := time.Now()
	for range 20 {
		lg.Error("kept longest")
	}
	if st := core.Stats(); st.WaitedOut == 0 || time.Since(start) < time.Duration(st.WaitedOut)*keepWait {
		t.Fatalf("Stats = %+v after %v: the errors did not wait KeepWait each", st, time.Since(start))
	}
	close(gate)
	require(t, core.Close(context.Background()))
	<-core.Done()
	st := core.Stats()
	dst.mu.Lock()
	out := dst.b.String()
	dst.mu.Unlock()
	if !strings.Contains(out, `"waited_out_by_level":{"error":`) {
		t.Fatalf("Stats = %+v; no report says the errors waited out:\n%s", st, out)
	}
	var waited uint64
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m struct {
			WaitedOut uint64 `json:"waited_out"`
		}
		if strings.Contains(line, zapsink.DroppedMessage) {
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatal(err)
			}
			waited += m.WaitedOut
		}
	}
	if waited != st.WaitedOut || st.DroppedByLevel[slog.LevelInfo] == 0 {
		t.Fatalf("the reports say %d waited out; Stats = %+v", waited, st)
	}
}
