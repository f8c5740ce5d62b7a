package logsink

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/internal/layout"
	"github.com/shardedsink/shardedsink/internal/limit"
	"github.com/shardedsink/shardedsink/internal/sinkhook"
	"github.com/shardedsink/shardedsink/sink"
)

// Writer is a non-blocking writer of formatted log records. See the
// package documentation for what it promises and what it costs.
//
// A Writer is safe for concurrent use. Its Streams share its sink,
// destination and counters.
type Writer struct {
	// The fields that every logging call reads come first and share their
	// cache lines with no field that anything writes while the writer
	// runs: the drain workers' words sit behind padding, so a logging call
	// does not miss its cache each time a worker takes the write lock. Its
	// counters, and those of shardState, are sync/atomic types, which keep
	// 64-bit words 8-byte aligned on 32-bit platforms too.
	sink   *sink.Sink[*Record]
	dst    io.Writer // the destination
	opts   settings
	logger *slog.Logger
	shards []shardState
	// handles[i] pushes into shard i; hooks[i] are its hand-off and byte
	// count (internal/sinkhook).
	handles []*sink.Handle[*Record]
	hooks   []sinkhook.Shard
	root    Stream
	epoch   time.Time

	_ [layout.CacheLine]byte
	// closed is the Writer's one state: 0 until Close begins, then 1 for
	// good. Only markClosed sets it, before Close waits for inflight to
	// reach zero on every shard (see Stream.Begin for the pairing), and
	// cancels closing with it: closing is the parent of every KeepWait
	// wait's ctx, so that every record waiting for room is shed at once.
	closed      atomic.Uint32
	closedDrops [levels]atomic.Uint64 // records handled after Close, per level
	closing     context.Context
	stopWaits   context.CancelFunc
	_           [layout.CacheLine]byte

	next atomic.Uint64 // the round-robin cursor for the shards of Streams
	_    [layout.CacheLine]byte

	wmu          sync.Mutex    // serialises the Writes
	written      atomic.Uint64 // records in Writes that succeeded
	failed       atomic.Uint64 // records lost to an error or a panic
	empty        atomic.Uint64 // records that had no bytes
	abandoned    atomic.Uint64 // records given up on when Close's ctx ended
	panics       atomic.Uint64 // recovered panics and Goexits
	panicReports limit.Every   // the turn of the panic reports, in Unix ns
	maxTurn      atomic.Int64  // the longest Drain call so far, in ns
	// writeStart is the time, in ns since the epoch, at which the Write in
	// progress began, or 0 when none is. Callers read it only when a ring
	// backs up.
	writeStart atomic.Int64
	assists    limit.Every // the turn of the callers' yields, in ns since epoch
	// parkedYields is the turn of the yields of callers that run while
	// records are parked for room (parkedTurn), in ns since epoch.
	parkedYields limit.Every
	errs         errorCalls

	closeOnce sync.Once
	closeErr  error
	closeDone chan struct{} // closed once closeErr is set
}

// shardState is one shard's part of the Writer.
type shardState struct {
	_ [layout.CacheLine]byte
	// counts holds the shard's queued and inflight counts in one word
	// (shardCounts): a logging call's begin, admission and end touch one
	// cache line where they touched two, and Begin's add returns queued,
	// so it loads nothing more.
	counts shardCounts
	_      [layout.CacheLine - 8]byte

	// Written only when records are dropped and when their reports are
	// pushed and drained.
	pendingHint atomic.Uint64         // > 0 when pending may hold counts
	pending     [levels]atomic.Uint64 // dropped and not yet reported in the stream, per level
	dropped     [levels]atomic.Uint64 // dropped, in total, per level
	markers     atomic.Int64          // markers counted in queued
	forBytes    atomic.Uint64         // of dropped, those shed for bytes (MaxQueuedBytes)
	// Of dropped, those at or above KeepLevel that waited Options.KeepWait
	// for room and found none, per level; and those not yet reported.
	waitedOut     [levels]atomic.Uint64
	pendingWaited [levels]atomic.Uint64
	_             [2*layout.CacheLine - 8 - 32*levels - 16]byte

	// Drain side: the shard's worker.
	mu  sync.Mutex
	out []byte // the Write being assembled, at most maxWrite bytes
}

// shardCounts is a shard's two admission counts, packed in one word:
//
//   - queued, the high 32 bits, counts the entries pushed into the shard
//     and not yet taken by a Drain call: it is added to before the push
//     and subtracted from after the pops, so it is never below the ring's
//     length. Admission keeps it at most the ring's capacity, except for
//     the records at or above KeepLevel that wait for room (KeepWait),
//     which it counts beyond: such a record pushes as soon as the ring
//     has a free slot, and may take the place of one that passed
//     admission and has not pushed yet (Stream.Push handles that refusal).
//   - inflight, the low 32 bits, counts the logging and Flush calls
//     between their closed check and their push (Stream.Begin has the
//     pairing with Close).
//
// Neither count is ever negative, nor near 2³¹ (a ring holds at most
// 2³⁰ entries, and inflight counts goroutines), so adding to one never
// carries into the other.
type shardCounts struct{ v atomic.Int64 }

const queuedOne = 1 << 32 // queued's unit in shardCounts

// begin counts a call in flight and returns queued, in one add.
func (c *shardCounts) begin() (queued int64) { return c.v.Add(1) >> 32 }

// end ends a call that begin counted.
func (c *shardCounts) end() { c.v.Add(-1) }

// addQueued adds n to queued and returns the new queued.
func (c *shardCounts) addQueued(n int64) int64 { return c.v.Add(n*queuedOne) >> 32 }

// queued returns queued.
func (c *shardCounts) queued() int64 { return c.v.Load() >> 32 }

// inflight returns inflight.
func (c *shardCounts) inflight() int64 { return c.v.Load() & (queuedOne - 1) }

// isClosed reports whether Close has begun.
func (w *Writer) isClosed() bool { return w.closed.Load() != 0 }

// markClosed is the Writer's one change of state (see closed).
func (w *Writer) markClosed() {
	w.closed.Store(1)
	w.stopWaits()
}

// New returns a Writer that writes to w. Its drain workers copy the bytes
// of a batch of records into one Write of at most 256 KiB (a longer record
// is written alone). Writes never overlap, so w need not be safe for
// concurrent use.
//
// New returns an error wrapping [ErrInvalidOptions] that names the field
// and the value of every invalid option (a nil w, a negative size other
// than MaxQueuedBytes and MaxDelay, a size beyond the sink's limits);
// nothing is started then. Otherwise the drain workers run until
// [Writer.Close].
func New(w io.Writer, opts *Options) (*Writer, error) {
	o, err := opts.settle(w)
	if err != nil {
		return nil, err
	}
	c := &Writer{dst: w, opts: o, logger: o.logger, shards: make([]shardState, o.shards), closeDone: make(chan struct{}), epoch: time.Now()}
	c.errs.name = o.name
	c.closing, c.stopWaits = context.WithCancel(context.Background())
	if c.logger == nil {
		c.logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	cfg := sink.Config[*Record]{
		Name:         o.name,
		Shards:       o.shards,
		RingCapacity: o.ringCapacity,
		BatchSize:    o.batchSize,
		MaxDelay:     o.maxDelay,
		// The records of one shard are written by its worker alone, in
		// ring order: that is the order promise.
		DisableStealing: true,
		// Drops are counted and reported by the Writer; the sink drops
		// only for bytes (admission keeps every ring below its capacity),
		// and Push counts those too.
		OnOverload: func(sink.Overload) {},
		// Nor does the monitor need to look often; a parked worker sets
		// no timer (with the default vyukov ring no doorbell slips:
		// sink.IdleWake). Idle, only the monitor wakes, once a minute.
		OverloadInterval: time.Minute,
		Logger:           c.logger,
		DisableHandOff:   o.disableHandOff,
	}
	if o.maxQueued > 0 {
		cfg.SizeOf, cfg.MaxQueuedBytes = heapBytes, o.maxQueued
	}
	if o.spillDir != "" {
		cfg.Spill = sink.Spill[*Record]{Dir: o.spillDir, MaxBytes: o.spillBytes, Codec: entryCodec{c}, SyncInterval: o.spillSync}
	}
	c.sink, err = sink.New(cfg, sink.ActionFunc[*Record](c.drain))
	if err != nil {
		c.stopWaits()
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	c.handles = make([]*sink.Handle[*Record], o.shards)
	c.hooks = make([]sinkhook.Shard, o.shards)
	for k, left := uint64(0), o.shards; left > 0; k++ {
		if sh := c.sink.HandleFor(k); c.handles[sh.Shard()] == nil {
			c.handles[sh.Shard()] = sh
			c.hooks[sh.Shard()] = sinkhook.ShardOf(sh)
			left--
		}
	}
	c.root = Stream{w: c, shard: 0, sh: c.handles[0]}
	return c, nil
}

// Write writes p as one record at Options.Level, through the Writer's own
// Stream (shard 0): see [Stream.WriteLevel], which says when it waits
// (never for a slow destination). It always returns len(p), nil: a record
// that is not accepted is counted (see [Writer.Stats]) and reported in
// the stream.
func (w *Writer) Write(p []byte) (int, error) { return w.root.WriteLevel(w.opts.level, p) }

// WriteLevel writes p as one record of level l, through the Writer's own
// Stream (shard 0): see [Stream.WriteLevel].
func (w *Writer) WriteLevel(l slog.Level, p []byte) (int, error) { return w.root.WriteLevel(l, p) }

// Root returns the Writer's own Stream, the one that Write uses (shard 0).
func (w *Writer) Root() Stream { return w.root }

// Stream returns a Stream of its own for a logger: one shard, the next
// one round-robin, whose records are written in the order they were
// accepted. Loggers that log through Streams of their own spread over the
// shards and their workers; the records of one goroutine through one
// Stream keep their order.
func (w *Writer) Stream() Stream {
	i := int(w.next.Add(1) % uint64(len(w.shards)))
	return Stream{w: w, shard: i, sh: w.handles[i]}
}

// Shards returns the number of shards.
func (w *Writer) Shards() int { return len(w.shards) }

// MaxDrainTurn returns the longest drain turn so far (one Drain call: the
// copies and the Writes of one batch), the time a worker held a P; for
// benchmarks and monitoring.
func (w *Writer) MaxDrainTurn() time.Duration { return time.Duration(w.maxTurn.Load()) }
