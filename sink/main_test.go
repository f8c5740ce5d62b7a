package sink_test

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardedsink/shardedsink/sink"
)

// TestMain fails the package if any test leaves a goroutine behind: every
// sink a test makes is shut down, and Shutdown must stop all its goroutines.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// ev is the value type of most tests: an id unique within a test.
type ev struct{ id int }

// newSink makes a sink and shuts it down when the test ends.
func newSink[T any](t testing.TB, cfg sink.Config[T], a sink.Action[T]) *sink.Sink[T] {
	t.Helper()
	s, err := sink.New(cfg, a)
	return started(t, s, err)
}

// newStealingSink is newSink with the steal budgets set: victims a round,
// items from each.
func newStealingSink[T any](t testing.TB, cfg sink.Config[T], a sink.Action[T], victims, items int) *sink.Sink[T] {
	t.Helper()
	s, err := sink.NewStealing(cfg, a, victims, items)
	return started(t, s, err)
}

// started checks New's result and shuts the sink down when the test ends.
func started[T any](t testing.TB, s *sink.Sink[T], err error) *sink.Sink[T] {
	t.Helper()
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, s.Shutdown(ctx))
	})
	return s
}

// testCfg is the original's contract-test configuration: a short monitor
// interval, stealing off, and the given shape.
func testCfg(shards, ringCap, batch int) sink.Config[ev] {
	return sink.Config[ev]{
		Shards:           shards,
		RingCapacity:     ringCap,
		BatchSize:        batch,
		OverloadInterval: 50 * time.Millisecond,
		DisableStealing:  true,
		Logger:           quiet,
	}
}

// quiet is the logger of tests that overflow rings on purpose: the overload
// monitor's reports (its last check at Shutdown included) would go to
// slog.Default and into the test output.
var quiet = slog.New(slog.DiscardHandler)

// collector is an Action that records every value it is handed.
type collector[T comparable] struct {
	mu      sync.Mutex
	seen    []T
	batches int
	maxLen  int
}

func (c *collector[T]) Drain(_ context.Context, batch []T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = append(c.seen, batch...)
	c.batches++
	c.maxLen = max(c.maxLen, len(batch))
}

// values returns a copy of what was seen so far.
func (c *collector[T]) values() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.seen)
}

func (c *collector[T]) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}

// gate is an Action that blocks every Drain call until the gate is opened,
// and says when the first call has entered.
type gate[T comparable] struct {
	collector[T]
	entered     chan struct{} // closed when the first Drain call enters
	enteredOnce sync.Once
	open        chan struct{}
	openOnce    sync.Once
	// quick is how many of the first Drain calls pass at once, before the
	// gate holds them (0 unless a test sets it before the first push).
	quick atomic.Int32
}

func newGate[T comparable]() *gate[T] {
	return &gate[T]{entered: make(chan struct{}), open: make(chan struct{})}
}

func (g *gate[T]) Drain(ctx context.Context, batch []T) {
	if g.quick.Add(-1) >= 0 {
		g.collector.Drain(ctx, batch)
		return
	}
	g.enteredOnce.Do(func() { close(g.entered) })
	select {
	case <-g.open:
	case <-ctx.Done():
	}
	g.collector.Drain(ctx, batch)
}

// waitEntered waits until a Drain call has entered the gate.
func (g *gate[T]) waitEntered(t testing.TB) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("no Drain call entered the gate")
	}
}

// release opens the gate for good.
func (g *gate[T]) release() { g.openOnce.Do(func() { close(g.open) }) }

// logBuffer is a concurrency-safe buffer for a test logger.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testLogger returns a text logger that writes into a buffer.
func testLogger() (*slog.Logger, *logBuffer) {
	b := &logBuffer{}
	return slog.New(slog.NewTextHandler(b, nil)), b
}

// eventually polls cond every millisecond until it holds or 10 s pass.
func eventually(t testing.TB, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, time.Millisecond, msg)
}

// flush calls Flush with a 10 s bound, so that a sink that can no longer
// drain fails the test instead of hanging it.
func flush[T any](t testing.TB, s *sink.Sink[T]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, s.Flush(ctx))
}
