package otelsink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"

	"github.com/shardedsink/shardedsink/sink"
)

// cacheBlock is what a hot field is padded to: two 64-byte lines, because
// x86 prefetches lines in adjacent pairs.
const cacheBlock = 128

// exporter is what the core needs of a span or log exporter.
type exporter[T any] interface {
	export(ctx context.Context, batch []T) error
	forceFlush(ctx context.Context) error
	flushes() bool // whether forceFlush does anything: false for span exporters, which have none
	shutdown(ctx context.Context) error
	name() string // for reports: the exporter's type
}

// core is the processor behind SpanProcessor and LogProcessor: a sink of T
// whose drain workers export batches one at a time, the counters, and
// Shutdown. Its methods are those of the processors, less the items' own
// filtering (sampling, cloning).
type core[T any] struct {
	sink *sink.Sink[T]
	exp  exporter[T]
	cfg  settings
	unit string // "spans" or "records", for errors

	// closed is loaded by every OnEnd and stored once, by Shutdown. It sits
	// on its own cache lines so that the drain workers' counter updates
	// below do not invalidate the line every producer reads.
	_      [cacheBlock]byte
	closed uint32
	_      [cacheBlock - 4]byte

	// The drain side. exportMu serialises the exporter's calls: the SDK
	// promises exporters that it never calls them concurrently, and the sink
	// has one drain worker per shard.
	exportMu     sync.Mutex
	exporterDown bool // under exportMu and acctMu: set before the exporter's Shutdown

	// acctMu guards the settling of the counts: an export's result is
	// counted under it unless Shutdown, whose ctx ended while the export
	// ran, has settled them (settled), counting the batch in the exporter's
	// hands (inExport) as failed. Only drain workers and Shutdown take it.
	acctMu   sync.Mutex
	settled  bool
	inExport uint64

	// Counters, updated with atomic adds off the producers' path (closedDrops
	// only by a push after Shutdown). exported and failed are added under
	// acctMu.
	exported     uint64 // items in export calls that returned nil
	failed       uint64 // items in export calls that failed
	exportErrors uint64 // export calls that failed
	closedDrops  uint64 // pushes after Shutdown
	lastErr      atomic.Pointer[error]
	// errorsReported is the exportErrors count that ForceFlush last
	// reported up to.
	errorsReported uint64

	// Exporter panics and Goexits, and their rate-limited report.
	exporterPanics  uint64
	faultsReported  uint64
	lastFaultReport int64 // unix ns of the last report; 0 before the first

	// drained is set once the rings are no longer drained for export: the
	// sink's workers have exited, or Shutdown settled the counts. From then
	// on every item accepted into the sink and neither exported nor failed
	// counts as dropped.
	drained uint32

	shutdownOnce sync.Once
	shutdownDone chan struct{} // closed once shutdownErr is set
	shutdownErr  error

	reg metric.Registration // nil without metrics
}

// init starts the sink. c must not move afterwards (the sink's Action points
// at it).
func (c *core[T]) init(exp exporter[T], st settings, unit string) error {
	c.exp, c.cfg, c.unit = exp, st, unit
	c.shutdownDone = make(chan struct{})
	var err error
	c.sink, err = sink.New(sinkConfig[T](st), drainAction[T]{c})
	if err != nil {
		// settle checks every bound that sink.New checks; should the sink
		// refuse anything else, it is still an option's fault.
		return fmt.Errorf("%w: %w", ErrInvalidOption, err)
	}
	return nil
}

// push hands v to the sink, or counts it dropped after Shutdown began.
// Shutdown stores closed before it shuts the sink down: a push that loads 0
// here and lands while the sink's final drain runs is either drained by it
// or left in a ring, where Stats counts it as dropped once the sink's
// Shutdown has returned.
func (c *core[T]) push(v T) {
	if atomic.LoadUint32(&c.closed) != 0 {
		atomic.AddUint64(&c.closedDrops, 1)
		return
	}
	c.sink.Push(v)
}

// exportCtxKey marks the ctx given to the exporter, so that Shutdown called
// with it (or a ctx derived from it) can return at once.
type exportCtxKey struct{}

// calledFromExport reports whether ctx is, or derives from, the ctx of one of
// this processor's export calls.
func (c *core[T]) calledFromExport(ctx context.Context) bool {
	q, _ := ctx.Value(exportCtxKey{}).(*core[T])
	return q == c
}

func (c *core[T]) forceFlush(ctx context.Context) error {
	if atomic.LoadUint32(&c.closed) != 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	err := c.sink.Flush(ctx)
	if errors.Is(err, sink.ErrShutdown) {
		// Shutdown stopped the workers while we waited. Its drain exports
		// what this flush waited for; the sink's Shutdown returns its result
		// (the first call's, waiting for it when it is still running).
		err = c.sink.Shutdown(ctx)
	}
	if err != nil {
		return err
	}
	// Report the failures since the previous report, each to one caller:
	// the compare-and-swap keeps two concurrent ForceFlush calls from
	// reporting one failure twice or moving the mark back.
	var reported error
	now := atomic.LoadUint64(&c.exportErrors)
	for {
		prev := atomic.LoadUint64(&c.errorsReported)
		if now <= prev {
			break
		}
		if atomic.CompareAndSwapUint64(&c.errorsReported, prev, now) {
			reported = fmt.Errorf("otelsink: %d export(s) failed since the previous ForceFlush, the last one: %w",
				now-prev, *c.lastErr.Load())
			break
		}
	}
	return join(reported, c.flushExporter(ctx))
}

// flushExporter calls the exporter's ForceFlush, if it has one (log
// exporters), serialised with the exports, unless the exporter is shut
// down. It returns ctx.Err() when ctx ends first, even if an export in
// progress or the exporter's ForceFlush ignores ctx.
func (c *core[T]) flushExporter(ctx context.Context) error {
	if !c.exp.flushes() {
		return nil
	}
	return untilDone(ctx, func() error {
		c.exportMu.Lock()
		defer c.exportMu.Unlock()
		if c.exporterDown {
			return nil
		}
		return c.exp.forceFlush(ctx)
	})
}

// untilDone runs f on another goroutine and returns its error, or ctx.Err()
// when ctx ends first; an error f returns after that goes to otel.Handle.
// The goroutine lives as long as f runs.
func untilDone(ctx context.Context, f func() error) error {
	done := make(chan error) // unbuffered: a send succeeds only while we wait
	go func() {
		err := f()
		select {
		case done <- err:
		case <-ctx.Done(): // the caller has given up, or is about to
			if err != nil {
				otel.Handle(err)
			}
		}
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *core[T]) shutdownCalled(ctx context.Context) error {
	if c.calledFromExport(ctx) {
		return fmt.Errorf("otelsink: Shutdown called with the ctx of an export call: it would wait for that call; the processor keeps running: %w",
			sink.ErrCalledFromDrain)
	}
	first := false
	c.shutdownOnce.Do(func() { first = true })
	if !first {
		select {
		case <-c.shutdownDone:
			return c.shutdownErr
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c.shutdownErr = c.shutdown(ctx)
	close(c.shutdownDone)
	return c.shutdownErr
}

func (c *core[T]) shutdown(ctx context.Context) error {
	atomic.StoreUint32(&c.closed, 1)
	sinkErr := c.sink.Shutdown(ctx)
	var regErr error
	if c.reg != nil {
		regErr = c.reg.Unregister()
	}
	if sinkErr != nil {
		// The sink returns an error only when ctx ended before its drain
		// completed (rings left undrained, or a Drain call cut short),
		// whether or not its workers have exited by now: the result must
		// not depend on which of the two the scheduler showed first. The
		// SDK's contract: a Shutdown cut short by its ctx returns ctx.Err()
		// itself (the sink's error wraps it with the count left, which
		// Stats reports as dropped).
		c.settle(ctx)
		go func() {
			<-c.sink.Done()
			if err := c.shutdownExporter(ctx); err != nil {
				otel.Handle(err)
			}
		}()
		return join(ctxErr(ctx, sinkErr), regErr)
	}
	atomic.StoreUint32(&c.drained, 1)
	// The counts are final; only the exporter's ForceFlush and Shutdown are
	// left, and an exporter that ignores ctx must not keep Shutdown waiting.
	return join(untilDone(ctx, func() error { return c.shutdownExporter(ctx) }), regErr)
}

// ctxErr is ctx.Err() for a Shutdown that ctx cut short, as cause (an error
// that wraps the ctx's) says. ctx.Err() can still be nil for an instant
// after ctx's deadline has passed, when the sink saw the deadline before
// ctx's own timer fired: it is then context.DeadlineExceeded, which
// ctx.Err() is about to return.
func ctxErr(ctx context.Context, cause error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if errors.Is(cause, context.Canceled) {
		return context.Canceled
	}
	return context.DeadlineExceeded
}

// settle makes the counts final after Shutdown's ctx ended with an export
// possibly in progress: that export's batch counts as failed, and from now
// on Stats counts every item accepted into the sink and not exported or
// failed as dropped.
func (c *core[T]) settle(ctx context.Context) {
	c.acctMu.Lock()
	defer c.acctMu.Unlock()
	if c.settled {
		return // the batch in flight was counted by the first call
	}
	c.settled = true
	if n := c.inExport; n > 0 {
		err := fmt.Errorf("otelsink: export of %d %s still running when Shutdown's ctx ended: %w", n, c.unit, context.Cause(ctx))
		c.lastErr.Store(&err)
		atomic.AddUint64(&c.failed, n)
		atomic.AddUint64(&c.exportErrors, 1)
	}
	atomic.StoreUint32(&c.drained, 1)
}

// shutdownExporter marks the exporter as shut down (no export starts after
// this) and calls its ForceFlush (log exporters, while ctx is live) and
// Shutdown. No drain worker runs any more.
func (c *core[T]) shutdownExporter(ctx context.Context) error {
	c.exportMu.Lock()
	defer c.exportMu.Unlock()
	c.acctMu.Lock()
	c.exporterDown = true
	c.acctMu.Unlock()
	var flushErr error
	if ctx.Err() == nil {
		flushErr = c.exp.forceFlush(ctx)
	}
	return join(flushErr, c.exp.shutdown(ctx))
}

// join is errors.Join, except that a single error is returned as it is, so
// that a ctx error stays comparable with ==.
func join(errs ...error) error {
	var only error
	n := 0
	for _, err := range errs {
		if err != nil {
			only = err
			n++
		}
	}
	if n <= 1 {
		return only
	}
	return errors.Join(errs...)
}

// stats returns the snapshot that SpanProcessor.Stats and LogProcessor.Stats
// return.
func (c *core[T]) stats() Stats {
	drained := atomic.LoadUint32(&c.drained) != 0
	st := Stats{
		Name:           c.cfg.name,
		Exported:       atomic.LoadUint64(&c.exported),
		Failed:         atomic.LoadUint64(&c.failed),
		ExportErrors:   atomic.LoadUint64(&c.exportErrors),
		ExporterPanics: atomic.LoadUint64(&c.exporterPanics),
		Capacity:       c.queueCapacity(),
	}
	ss := c.sink.Stats()
	st.Sink = ss
	st.Dropped = ss.Dropped + atomic.LoadUint64(&c.closedDrops)
	st.Queued = ss.Queued
	if drained {
		// exported and failed were final before drained was stored.
		accepted := uint64(ss.Queued) + ss.Drained
		if done := st.Exported + st.Failed; accepted > done {
			st.Dropped += accepted - done
		}
		st.Queued = 0
	}
	return st
}

func (c *core[T]) queueCapacity() int { return c.cfg.perShard * c.cfg.shards }

// Stats is a snapshot of a processor's counters, from [SpanProcessor.Stats]
// or [LogProcessor.Stats]; the items are spans or log records.
type Stats struct {
	Name         string `json:"name"`
	Exported     uint64 `json:"exported"`      // items in export calls that returned nil
	Failed       uint64 `json:"failed"`        // items in export calls that returned an error, panicked, called runtime.Goexit, or were still running when Shutdown's ctx ended
	ExportErrors uint64 `json:"export_errors"` // export calls that failed so
	// ExporterPanics counts the export calls that panicked or called
	// runtime.Goexit (each is also in ExportErrors). They are reported
	// through the logger ([WithLogger]) at most once a minute, with the
	// stack of a panic, and not handed to otel.Handle.
	ExporterPanics uint64     `json:"exporter_panics"`
	Dropped        uint64     `json:"dropped"`  // see SpanProcessor.Dropped
	Queued         int        `json:"queued"`   // items waiting in the rings; 0 after Shutdown, when they count as Dropped
	Capacity       int        `json:"capacity"` // QueueCapacity
	Sink           sink.Stats `json:"sink"`     // the sink's own view: drops at push, per shard
}

// drainAction is the sink's Action: it exports each batch.
type drainAction[T any] struct{ c *core[T] }

// Drain exports batch; see core.export.
func (a drainAction[T]) Drain(ctx context.Context, batch []T) {
	if err := a.c.exportLocked(ctx, batch); err != nil {
		otel.Handle(err) // outside the mutex: a slow handler delays no export
	}
}

// outcome is how an export call ended.
type outcome struct {
	err   error
	fault string // "" when the exporter returned; else what it did instead, for the report
	stack []byte // of a panic
}

// exportLocked runs on a drain worker. It calls the exporter under exportMu,
// with ctx (cancelled only when the ctx given to Shutdown ends first)
// bounded by the export timeout, unless the exporter is shut down or
// Shutdown has settled the counts, and counts the result before Drain
// returns, so that Flush (and ForceFlush) sees it. A failure is counted and
// returned for otel.Handle; the items of a failed export are not retried (as
// in the SDK's batch processors: retrying is the exporter's business).
//
// Its deferred call counts the batch however the exporter leaves: by
// returning, by panicking (recovered in callExporter), or by runtime.Goexit,
// which ends this goroutine after the deferred calls (the sink then starts
// the shard's worker anew).
func (c *core[T]) exportLocked(ctx context.Context, batch []T) (handle error) {
	n := uint64(len(batch))
	c.exportMu.Lock()
	defer c.exportMu.Unlock()
	if !c.begin(n) {
		return nil
	}
	res := outcome{fault: "called runtime.Goexit"}
	defer func() { handle = c.end(n, res) }()
	res = c.callExporter(ctx, batch)
	return nil // replaced by the deferred call
}

// begin records that a batch of n items is handed to the exporter, and
// reports false when it must not be: the exporter is shut down, or Shutdown
// has settled the counts after its ctx ended. Such a batch is counted as
// dropped by Stats (it was taken from a ring and neither exported nor
// failed). exportMu is held.
func (c *core[T]) begin(n uint64) bool {
	c.acctMu.Lock()
	defer c.acctMu.Unlock()
	if c.settled || c.exporterDown {
		return false
	}
	c.inExport = n
	return true
}

// end counts the outcome of an export of n items, unless Shutdown settled
// the counts while it ran (then Shutdown counted the batch as failed, and
// the late outcome changes no count). It returns the error to hand to
// otel.Handle: that of an export that returned an error. A panic or Goexit
// is counted in Stats().ExporterPanics and reported through the logger at
// most once a minute instead.
func (c *core[T]) end(n uint64, res outcome) error {
	var err error
	switch {
	case res.fault != "":
		err = fmt.Errorf("otelsink: export of %d %s: exporter %s %s", n, c.unit, c.exp.name(), res.fault)
	case res.err != nil:
		err = fmt.Errorf("otelsink: export of %d %s: %w", n, c.unit, res.err)
	}
	c.acctMu.Lock()
	c.inExport = 0
	if !c.settled {
		if err == nil {
			atomic.AddUint64(&c.exported, n)
		} else {
			c.lastErr.Store(&err) // before the count: ForceFlush loads it after it sees the count rise
			atomic.AddUint64(&c.failed, n)
			atomic.AddUint64(&c.exportErrors, 1)
		}
	}
	c.acctMu.Unlock()
	if res.fault != "" {
		c.reportFault(err, res)
		return nil
	}
	return err
}

// callExporter calls the exporter with the export timeout, and turns a panic
// in it into an outcome. A Goexit passes through.
func (c *core[T]) callExporter(ctx context.Context, batch []T) (res outcome) {
	ctx = context.WithValue(ctx, exportCtxKey{}, c)
	if t := c.cfg.exportTimeout; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, t, ErrExportTimeout)
		defer cancel()
	}
	returned := false
	defer func() {
		if returned {
			return
		}
		if r := recover(); r != nil {
			res = outcome{fault: fmt.Sprintf("panicked: %v", r), stack: debug.Stack()}
		}
		// r == nil: runtime.Goexit; the caller's deferred call counts it.
	}()
	err := c.exp.export(ctx, batch)
	returned = true
	return outcome{err: err}
}

// faultReportEvery is the least time between two reports of exporter panics
// (and Goexits) through the logger.
const faultReportEvery = time.Minute

// reportFault counts a panic or Goexit of the exporter and logs it, at most
// once every faultReportEvery (the report says how many it stands for).
func (c *core[T]) reportFault(err error, res outcome) {
	total := atomic.AddUint64(&c.exporterPanics, 1)
	now := time.Now().UnixNano()
	last := atomic.LoadInt64(&c.lastFaultReport)
	if last != 0 && now-last < int64(faultReportEvery) {
		return
	}
	if !atomic.CompareAndSwapInt64(&c.lastFaultReport, last, now) {
		return // another worker reports
	}
	since := total - atomic.SwapUint64(&c.faultsReported, total)
	args := []any{"processor", c.cfg.name, "error", err.Error(), "faults_since_last_report", since, "faults_total", total}
	if res.stack != nil {
		args = append(args, "stack", string(res.stack))
	}
	logger := c.cfg.logger
	if logger == nil {
		logger = slog.Default()
	}
	logger.Error("otelsink: the exporter panicked or called runtime.Goexit; its batch failed (reported at most once a minute)", args...)
}
