package otelsink

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/shardedsink/shardedsink/internal/layout"
	"github.com/shardedsink/shardedsink/sink"
)

// exporter is what the core needs of a span or log exporter.
type exporter[T any] interface {
	export(ctx context.Context, batch []T) error
	forceFlush(ctx context.Context) error
	flushes() bool // whether forceFlush does anything: false for span exporters, which have none
	shutdown(ctx context.Context) error
	name() string // for reports: the exporter's type
}

// core is the processor behind SpanProcessor and LogProcessor: a sink of T
// whose drain workers hand what they take to one export batch (batch.go),
// the exports (export.go), ForceFlush (flush.go), Shutdown (shutdown.go)
// and the counters. Its methods are those of the processors, less the
// items' own filtering (sampling, cloning).
type core[T any] struct {
	sink *sink.Sink[T]
	exp  exporter[T]
	cfg  settings
	unit string // "spans" or "records", for errors

	// closed is loaded by every OnEnd and stored once, by Shutdown. It sits
	// on its own cache lines so that the drain workers' counter updates
	// below do not invalidate the line every producer reads.
	_      [layout.CacheLine]byte
	closed uint32
	_      [layout.CacheLine - 4]byte

	// The export path. exportMu serialises the exporter's calls (the SDK
	// promises exporters that it never calls them concurrently, and the
	// sink has one drain worker per shard) and guards the batch being
	// assembled: the drain workers append what they take to it, and it is
	// exported when it holds batchSize items, batchTimeout after its first
	// item (the timer), or at ForceFlush and Shutdown.
	exportMu     chanMutex
	exporterDown bool        // under exportMu and acctMu: set before the exporter's Shutdown
	batch        []T         // under exportMu: the export batch being assembled, cap batchSize
	batchSince   time.Time   // under exportMu: when batch's first item arrived
	timer        *time.Timer // time.AfterFunc(batchTimedOut); Reset and Stop under exportMu
	// untimedExport is set while an export that no drain worker makes
	// (the timer's, ForceFlush's, Shutdown's) runs: a worker that waits
	// for exportMu behind it times the wait (lockExport).
	untimedExport atomic.Bool
	// aborted is the parent ctx of the exports that no drain worker makes
	// (the timer's): it is cancelled when Shutdown's ctx ends first, as the
	// sink cancels the ctx of its Drain calls.
	aborted context.Context
	abort   context.CancelFunc

	// acctMu guards the settling of the counts: an export's result is
	// counted under it unless Shutdown, whose ctx ended while the export
	// ran, has settled them (settled), counting the batch in the exporter's
	// hands (inExport) as failed. Only the export path and Shutdown take it.
	acctMu   sync.Mutex
	settled  bool
	inExport uint64

	// Counters, updated with atomic adds off the producers' path. exported
	// and failed are added under acctMu. The 64-bit ones come first, in a
	// row from an 8-byte boundary, so that they are 8-byte aligned on
	// 32-bit platforms too (align.go checks it when building for them).
	exported       uint64 // items in export calls that returned nil
	failed         uint64 // items in export calls that failed
	exportErrors   uint64 // export calls that failed
	shutdownErrors uint64 // the exporter's Shutdown returned an error (0 or 1)
	// errorsReported is the exportErrors count that ForceFlush last
	// reported up to.
	errorsReported uint64
	// fullAtClose is the sink's drop count when Shutdown stored closed:
	// the drops at push before it are a full queue's, those after it
	// Shutdown's (a push that loaded closed just before the store and met
	// a ring Shutdown had closed). Set once, before fullSet.
	fullAtClose uint64
	// Exporter panics and Goexits, and their rate-limited report.
	exporterPanics  uint64
	faultsReported  uint64
	lastFaultReport int64 // unix ns of the last report; 0 before the first
	lastErr         atomic.Pointer[error]
	fullSet         uint32

	// drained is set once the rings are no longer drained for export: the
	// sink's workers have exited and the last batch went to the exporter,
	// or Shutdown settled the counts. From then on every item accepted into
	// the sink and neither exported nor failed counts as dropped.
	drained uint32
	// finished is set once Shutdown's work is over: the counts are final
	// (but for closed drops) and no worker runs.
	finished uint32

	shutdownOnce sync.Once
	shutdownDone chan struct{} // closed once shutdownErr is set
	shutdownErr  error

	// obs is what the metrics callback reads (metric.go); it holds the
	// count of pushes after Shutdown, which outlives the processor there.
	obs *observed[T]
}

// init starts the sink. c must not move afterwards (the sink's Action and
// the timer point at it).
func (c *core[T]) init(exp exporter[T], st settings, unit string) error {
	c.exp, c.cfg, c.unit = exp, st, unit
	c.shutdownDone = make(chan struct{})
	c.exportMu = make(chanMutex, 1)
	c.obs = &observed[T]{}
	c.batch = make([]T, 0, st.batchSize)
	c.aborted, c.abort = context.WithCancel(context.Background())
	c.timer = time.AfterFunc(time.Hour, c.batchTimedOut)
	c.timer.Stop()
	var err error
	c.sink, err = sink.New(sinkConfig[T](st), drainAction[T]{c})
	if err != nil {
		c.abort()
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
		atomic.AddUint64(&c.obs.closedDrops, 1)
		return
	}
	c.sink.Push(v)
}

// release stops what init started, for a processor that New gives up on
// before anyone could push into it: the sink (empty), the timer, the abort
// ctx. The exporter is the caller's still, and is not shut down.
func (c *core[T]) release() {
	_ = c.sink.Shutdown(context.Background())
	c.timer.Stop()
	c.abort()
}

// chanMutex is a mutex whose waiters testing/synctest sees as durably
// blocked, as it sees a goroutine blocked on a channel (and not one blocked
// on a sync.Mutex): so the clock of a bubble advances while a drain worker
// waits for an export that waits for that clock (an exporter's timer, the
// batch timeout), in the tests and in users' tests alike. It is taken once
// per Drain call and per export, never on the producers' path.
type chanMutex chan struct{}

func (m chanMutex) Lock()   { m <- struct{}{} }
func (m chanMutex) Unlock() { <-m }

// TryLock locks m if it is free and reports whether it did.
func (m chanMutex) TryLock() bool {
	select {
	case m <- struct{}{}:
		return true
	default:
		return false
	}
}

// exportCtxKey marks the ctx given to the exporter, so that Shutdown and
// ForceFlush called with it (or a ctx derived from it) can return at once.
type exportCtxKey struct{}

// calledFromExport reports whether ctx is, or derives from, the ctx of one of
// this processor's export calls.
func (c *core[T]) calledFromExport(ctx context.Context) bool {
	q, _ := ctx.Value(exportCtxKey{}).(*core[T])
	return q == c
}

// errExporterGoexit is the result of an exporter call that called
// runtime.Goexit on a goroutine of untilDone.
var errExporterGoexit = errors.New("otelsink: the exporter called runtime.Goexit")

// untilDone runs f on another goroutine and returns its error, or ctx.Err()
// when ctx ends first; an error f returns after that goes to otel.Handle.
// The goroutine lives as long as f runs; should f call runtime.Goexit (an
// exporter may), its error is errExporterGoexit.
func untilDone(ctx context.Context, f func() error) error {
	done := make(chan error) // unbuffered: a send succeeds only while we wait
	go func() {
		err := errExporterGoexit
		defer func() {
			select {
			case done <- err:
			case <-ctx.Done(): // the caller has given up, or is about to
				if err != nil {
					otel.Handle(err)
				}
			}
		}()
		err = f()
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
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
func (c *core[T]) stats() Stats { return c.statsAt(atomic.LoadUint64(&c.obs.closedDrops)) }

// statsAt is stats with closed as the count of pushes after Shutdown.
func (c *core[T]) statsAt(closed uint64) Stats {
	drained := atomic.LoadUint32(&c.drained) != 0
	st := Stats{
		Name:                   c.cfg.name,
		Exported:               atomic.LoadUint64(&c.exported),
		Failed:                 atomic.LoadUint64(&c.failed),
		ExportErrors:           atomic.LoadUint64(&c.exportErrors),
		ExporterPanics:         atomic.LoadUint64(&c.exporterPanics),
		ExporterShutdownErrors: atomic.LoadUint64(&c.shutdownErrors),
		Capacity:               c.queueCapacity(),
	}
	ss := c.sink.Stats()
	st.Sink = ss
	st.QueueFull = ss.Dropped
	if atomic.LoadUint32(&c.fullSet) != 0 {
		st.QueueFull = atomic.LoadUint64(&c.fullAtClose)
	}
	st.Dropped = ss.Dropped + closed
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
	ExporterPanics uint64 `json:"exporter_panics"`
	// ExporterShutdownErrors is 1 once the exporter's Shutdown (or, for
	// logs, its ForceFlush at Shutdown) has returned an error, also when it
	// ran after a Shutdown cut short by its ctx, whose error went to
	// otel.Handle.
	ExporterShutdownErrors uint64 `json:"exporter_shutdown_errors"`
	Dropped                uint64 `json:"dropped"` // see SpanProcessor.Dropped
	// QueueFull is the part of Dropped refused at push because both rings
	// were full, before Shutdown began (the metrics' error.type=queue_full;
	// the rest of Dropped is error.type=shutdown).
	QueueFull uint64     `json:"queue_full"`
	Queued    int        `json:"queued"`   // items waiting in the rings; 0 after Shutdown, when they count as Dropped
	Capacity  int        `json:"capacity"` // QueueCapacity
	Sink      sink.Stats `json:"sink"`     // the sink's own view: drops at push, per shard
}
