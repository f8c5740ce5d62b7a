package otelsink_test

// A fault-injection soak of both processors: exporters that panic, call runtime.Goexit, block
// past their ctx (ignoring it), return errors or are slow; ForceFlush and
// Shutdown at random moments with live and ended ctxs; GOMAXPROCS 1 and 2.
// After each round: exact accounting, no goroutine left, no wait unbounded.
//
//	go test -run Soak -soak 5m .   (each of the two soaks runs 5m)

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.uber.org/goleak"

	"github.com/shardedsink/shardedsink/otelsink"
)

var soakFor = flag.Duration("soak", 0, "run the fault-injection soaks for this long (default: a short run)")

// soakLength is how long a soak runs: the -soak flag, else short.
func soakLength() time.Duration {
	if *soakFor > 0 {
		return *soakFor
	}
	if testing.Short() {
		return 200 * time.Millisecond
	}
	return time.Second
}

// faultKind is what one ExportSpans call of a faultyExporter does.
type faultKind int

const (
	faultOK faultKind = iota
	faultSlow
	faultError
	faultPanic
	faultGoexit
	faultBlockIgnoringCtx
	faultBlockHonouringCtx
	numFaults
)

var faultNames = [numFaults]string{"ok", "slow", "error", "panic", "goexit", "block-ignoring-ctx", "block-honouring-ctx"}

// faultyExporter draws a fault for each export. Every block is bounded
// (maxBlock), so that a round always ends, but for an export that ignores
// its ctx in a round whose Shutdown's ctx ends (heldUntilRelease): it holds
// its batch until the round releases it, after Shutdown has returned.
type faultyExporter struct {
	mu       sync.Mutex
	rng      *rand.Rand
	weights  [numFaults]int
	maxBlock time.Duration

	heldUntilRelease bool
	release          chan struct{} // closed by the round once Shutdown has returned
	held             atomic.Int32  // exports that ignore their ctx, holding their batch now

	inFlight      atomic.Int32
	overlapped    atomic.Bool
	shutdowns     atomic.Int32
	afterShutdown atomic.Int64
	okSpans       atomic.Uint64 // spans of exports that returned nil
	maxBatch      atomic.Int64
	faults        [numFaults]atomic.Uint64
}

var errInjected = errors.New("injected export error")

func (e *faultyExporter) draw() (faultKind, time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	total := 0
	for _, w := range e.weights {
		total += w
	}
	r := e.rng.IntN(total)
	k := faultKind(0)
	for ; r >= e.weights[k]; k++ {
		r -= e.weights[k]
	}
	return k, time.Duration(e.rng.Int64N(int64(e.maxBlock)))
}

func (e *faultyExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	return e.export(ctx, len(spans))
}

func (e *faultyExporter) Export(ctx context.Context, records []sdklog.Record) error {
	return e.export(ctx, len(records))
}

func (e *faultyExporter) ForceFlush(context.Context) error {
	if e.inFlight.Add(1) > 1 {
		e.overlapped.Store(true)
	}
	defer e.inFlight.Add(-1)
	if e.shutdowns.Load() > 0 {
		e.afterShutdown.Add(1)
	}
	return nil
}

func (e *faultyExporter) export(ctx context.Context, n int) error {
	if e.inFlight.Add(1) > 1 {
		e.overlapped.Store(true)
	}
	defer e.inFlight.Add(-1)
	if e.shutdowns.Load() > 0 {
		e.afterShutdown.Add(int64(n))
	}
	for {
		m := e.maxBatch.Load()
		if int64(n) <= m || e.maxBatch.CompareAndSwap(m, int64(n)) {
			break
		}
	}
	k, d := e.draw()
	e.faults[k].Add(1)
	switch k {
	case faultSlow:
		time.Sleep(d / 20)
	case faultError:
		return errInjected
	case faultPanic:
		panic("injected exporter panic")
	case faultGoexit:
		runtime.Goexit()
	case faultBlockIgnoringCtx:
		e.held.Add(1)
		if e.heldUntilRelease {
			<-e.release
		} else {
			time.Sleep(d) // a Shutdown with a live ctx waits for it
		}
		e.held.Add(-1)
	case faultBlockHonouringCtx:
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	e.okSpans.Add(uint64(n))
	return nil
}

func (e *faultyExporter) Shutdown(context.Context) error {
	e.shutdowns.Add(1)
	return nil
}

// The kinds of ctx that soakCtx makes.
const (
	ctxLive  = iota // bounded by 10 s, so that no wait is unbounded
	ctxShort        // up to 5 ms
	ctxEnded        // cancelled already
	numCtxKinds
)

// soakCtx returns a ctx of one of the kinds, at random.
func soakCtx(rng *rand.Rand) (context.Context, context.CancelFunc) {
	return soakCtxOf(rng.IntN(numCtxKinds), rng)
}

// soakCtxOf returns a ctx of the given kind.
func soakCtxOf(kind int, rng *rand.Rand) (context.Context, context.CancelFunc) {
	switch kind {
	case ctxLive:
		return context.WithTimeout(context.Background(), 10*time.Second)
	case ctxShort:
		return context.WithTimeout(context.Background(), time.Duration(rng.Int64N(int64(5*time.Millisecond))))
	default:
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx, cancel
	}
}

// waitBounded runs f and fails the test with every goroutine's stack if it
// has not returned within limit.
func waitBounded(t *testing.T, what string, limit time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(limit):
		buf := make([]byte, 1<<20)
		t.Fatalf("%s did not return within %v:\n%s", what, limit, buf[:runtime.Stack(buf, true)])
	}
}

// soakTarget is a processor under the soak: emit hands it item i of
// producer g and reports whether the processor must account for it.
type soakTarget struct {
	emit       func(g, i int, r *rand.Rand) bool
	forceFlush func(context.Context) error
	shutdown   func(context.Context) error
	stats      func() otelsink.Stats
}

func spanTarget(t *testing.T, exp *faultyExporter, opts []otelsink.Option) soakTarget {
	p, err := otelsink.New(exp, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return soakTarget{
		emit: func(g, i int, r *rand.Rand) bool {
			s := r.IntN(8) != 0
			p.OnEnd(stub(g<<24|i, s))
			return s
		},
		forceFlush: p.ForceFlush, shutdown: p.Shutdown, stats: p.Stats,
	}
}

func logTarget(t *testing.T, exp *faultyExporter, opts []otelsink.Option) soakTarget {
	p, err := otelsink.NewLog(exp, opts...)
	if err != nil {
		t.Fatal(err)
	}
	base := record(0)
	return soakTarget{
		emit: func(g, i int, r *rand.Rand) bool {
			rec := base.Clone()
			rec.SetBody(attribute.IntValue(g<<24 | i))
			ctx := context.Background()
			if r.IntN(8) == 0 {
				c, cancel := context.WithCancel(ctx)
				cancel()
				ctx = c // an ended ctx does not stop a record
			}
			if err := p.OnEmit(ctx, &rec); err != nil {
				t.Errorf("OnEmit: %v", err)
			}
			return true
		},
		forceFlush: p.ForceFlush, shutdown: p.Shutdown, stats: p.Stats,
	}
}

func TestSoakSpanProcessorUnderInjectedFaults(t *testing.T) { soak(t, spanTarget) }

func TestSoakLogProcessorUnderInjectedFaults(t *testing.T) { soak(t, logTarget) }

func soak(t *testing.T, target func(*testing.T, *faultyExporter, []otelsink.Option) soakTarget) {
	length := soakLength()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, length %v", seed, length)
	rng := rand.New(rand.NewPCG(seed, 1))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	ignore := goleak.IgnoreCurrent()
	var totals [numFaults]uint64
	var ended, shutdownsWithCtxErr, shutdownsWhileHeld uint64
	// The run goes on past its length (up to ten times it, at least 10 s)
	// until every fault kind has fired and a Shutdown has returned while an
	// export held its batch ignoring its ctx; then it fails if any has not.
	exercised := func() bool {
		return !slices.Contains(totals[:], 0) && shutdownsWhileHeld > 0
	}
	rounds := 0
	for start := time.Now(); (time.Since(start) < length || rounds < 4 || !exercised()) && time.Since(start) < max(10*length, 10*time.Second); rounds++ {
		procs := 1 + rounds%2
		runtime.GOMAXPROCS(procs)
		exp := &faultyExporter{rng: rand.New(rand.NewPCG(rng.Uint64(), 2)), maxBlock: 20 * time.Millisecond}
		for k := range exp.weights {
			exp.weights[k] = 1 + rng.IntN(10) // every kind can fire in every round
		}
		exp.weights[faultOK] += 5
		n := soakRound(t, rng, exp, target)
		ended += n.ended
		if n.shutdownErr {
			shutdownsWithCtxErr++
		}
		if n.whileHeld {
			shutdownsWhileHeld++
		}
		for k := range totals {
			totals[k] += exp.faults[k].Load()
		}
		if err := goleak.Find(ignore); err != nil {
			t.Fatalf("round %d (GOMAXPROCS %d): goroutines left: %v", rounds, procs, err)
		}
		if t.Failed() {
			t.Fatalf("round %d (GOMAXPROCS %d) failed", rounds, procs)
		}
	}
	msg := fmt.Sprintf("%d rounds, %d items ended (sampled spans or records), %d Shutdowns ended by their ctx, %d of them while an export held its batch; exports:",
		rounds, ended, shutdownsWithCtxErr, shutdownsWhileHeld)
	for k, n := range totals {
		msg += fmt.Sprintf(" %s %d", faultNames[k], n)
	}
	t.Log(msg)
	for k, n := range totals {
		if n == 0 {
			t.Errorf("no export drew the fault %q", faultNames[k])
		}
	}
	if shutdownsWhileHeld == 0 {
		t.Error("no Shutdown returned while an export that ignores its ctx held its batch")
	}
}

type roundResult struct {
	ended       uint64
	shutdownErr bool
	whileHeld   bool // Shutdown returned while an export that ignores its ctx held its batch
}

// soakRound runs one processor through producers, random flushes and a
// Shutdown at a random moment, and checks the accounting.
func soakRound(t *testing.T, rng *rand.Rand, exp *faultyExporter, target func(*testing.T, *faultyExporter, []otelsink.Option) soakTarget) roundResult {
	t.Helper()
	// The ctx of the round's Shutdown, drawn now: when it ends, an export
	// that ignores its ctx holds its batch until Shutdown has returned, so
	// that a Shutdown that waited for it would never return.
	ctxKind := rng.IntN(numCtxKinds)
	exp.heldUntilRelease, exp.release = ctxKind != ctxLive, make(chan struct{})
	shards := 1 + rng.IntN(4)
	batch := 1 + rng.IntN(32)
	opts := []otelsink.Option{
		quiet,
		otelsink.WithShards(shards),
		otelsink.WithMaxQueueSize(shards * (4 + rng.IntN(128))),
		otelsink.WithMaxExportBatchSize(batch),
		otelsink.WithExportTimeout([]time.Duration{0, time.Millisecond, 10 * time.Millisecond}[rng.IntN(3)]),
	}
	p := target(t, exp, opts)
	var sampled atomic.Uint64
	stop := make(chan struct{})
	var producers, chaos sync.WaitGroup
	for g := range 1 + rng.IntN(8) {
		seed := rng.Uint64()
		producers.Go(func() {
			r := rand.New(rand.NewPCG(seed, 3))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if p.emit(g, i, r) {
					sampled.Add(1)
				}
				if i%64 == 0 {
					runtime.Gosched()
				}
			}
		})
	}
	for range rng.IntN(3) {
		seed := rng.Uint64()
		chaos.Go(func() {
			r := rand.New(rand.NewPCG(seed, 4))
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := soakCtx(r)
				_ = p.forceFlush(ctx)
				cancel()
				_ = p.stats()
				time.Sleep(time.Duration(r.Int64N(int64(2 * time.Millisecond))))
			}
		})
	}
	time.Sleep(time.Duration(rng.Int64N(int64(20 * time.Millisecond))))

	// Shutdown at a random moment: while producers still run, or after.
	stopEarly := rng.IntN(2) == 0
	if !stopEarly {
		close(stop)
		producers.Wait()
	}
	ctx, cancel := soakCtxOf(ctxKind, rng)
	defer cancel()
	var shutErr error
	second := make(chan error, 1)
	// Shutdown returns when its ctx ends, even while an export that ignores
	// its ctx holds its batch: that export is released only after Shutdown
	// has returned, so a Shutdown that waited for it would not return at
	// all, whatever the machine's speed.
	held := int32(0)
	waitBounded(t, "Shutdown", 15*time.Second, func() {
		if rng.IntN(4) == 0 {
			go func() { second <- p.shutdown(context.Background()) }()
		} else {
			second <- nil
		}
		shutErr = p.shutdown(ctx)
		held = exp.held.Load()
	})
	close(exp.release)
	if held > 0 && shutErr == nil {
		t.Errorf("Shutdown returned nil while %d export(s) that ignore their ctx held their batch", held)
	}
	if stopEarly {
		close(stop)
		producers.Wait()
	}
	waitBounded(t, "the chaos goroutines", 15*time.Second, chaos.Wait)
	waitBounded(t, "a concurrent Shutdown", 15*time.Second, func() { <-second })
	// The exporter's Shutdown returns nil, so Shutdown returns nil or, when
	// its ctx ended first, ctx.Err() itself (not an error wrapping it): the
	// ctx's own error once it has ended, or context.DeadlineExceeded once its
	// deadline has passed (the sink can see the deadline before ctx's own
	// timer has fired).
	if shutErr != nil {
		d, ok := ctx.Deadline()
		switch {
		case shutErr != context.Canceled && shutErr != context.DeadlineExceeded:
			t.Errorf("Shutdown returned %v (%T), not ctx.Err() itself", shutErr, shutErr)
		case ctx.Err() != nil && shutErr != ctx.Err():
			t.Errorf("Shutdown returned %v, its ctx ended with %v", shutErr, ctx.Err())
		case ctx.Err() == nil && !(ok && !time.Now().Before(d) && shutErr == context.DeadlineExceeded):
			t.Errorf("Shutdown returned %v with its ctx live", shutErr)
		}
	}

	// The counts are final when Shutdown returns, but for a drain worker in
	// the middle of a take when its ctx ended (see Shutdown). The exporter
	// is shut down once the last export has returned: wait for that.
	waitBounded(t, "the exporter's Shutdown", 15*time.Second, func() {
		for exp.shutdowns.Load() == 0 {
			time.Sleep(100 * time.Microsecond)
		}
	})
	st := p.stats()
	want := sampled.Load()
	if got := st.Exported + st.Failed + st.Dropped; got != want {
		t.Errorf("exported %d + failed %d + dropped %d = %d, ended %d (stats %+v)", st.Exported, st.Failed, st.Dropped, got, want, st)
	}
	if st.Queued != 0 {
		t.Errorf("Queued %d after Shutdown", st.Queued)
	}
	if ok := exp.okSpans.Load(); st.Exported > ok || ok-st.Exported > uint64(batch) {
		t.Errorf("processor counted %d exported, the exporter returned nil for %d (batch %d)", st.Exported, ok, batch)
	}
	if faults := exp.faults[faultPanic].Load() + exp.faults[faultGoexit].Load(); st.ExporterPanics != faults {
		t.Errorf("ExporterPanics %d, exporter panicked or called Goexit %d times", st.ExporterPanics, faults)
	}
	if exp.overlapped.Load() {
		t.Error("ExportSpans ran concurrently with itself")
	}
	if n := exp.afterShutdown.Load(); n != 0 {
		t.Errorf("%d spans exported after the exporter's Shutdown", n)
	}
	if n := exp.shutdowns.Load(); n != 1 {
		t.Errorf("the exporter was shut down %d times", n)
	}
	if m := exp.maxBatch.Load(); m > int64(batch) {
		t.Errorf("an export of %d spans, batch size %d", m, batch)
	}
	return roundResult{ended: want, shutdownErr: shutErr != nil, whileHeld: held > 0 && exp.heldUntilRelease}
}
