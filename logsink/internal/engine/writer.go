// Package engine is the machinery of package logsink's Writer: the
// admission, the rings, the drop counts and reports, the drain and Close.
// Package logsink wraps it in the user's Writer and Stream, and package
// logsink/frontend in the hooks of front-end authors; nothing else can
// import it, so its exported names are only theirs. The promises, and the
// users' docs of every method, are in those two packages.
package engine

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/internal/layout"
	"github.com/shardedsink/shardedsink/internal/limit"
	"github.com/shardedsink/shardedsink/internal/sinkhook"
	"github.com/shardedsink/shardedsink/sink"
)

// Writer is the engine of a logsink.Writer: safe for concurrent use, its
// Streams share its sink, destination and counters.
type Writer struct {
	// The fields that every logging call reads come first and share their
	// cache lines with no field that anything writes while the writer
	// runs: the drain workers' words sit behind padding, so a logging call
	// does not miss its cache each time a worker takes the write lock. Its
	// counters, and those of shardState, are sync/atomic types, which keep
	// 64-bit words 8-byte aligned on 32-bit platforms too.
	sink   *sink.Sink[*Record]
	dst    io.Writer // the destination
	opts   Settings
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

// New returns a Writer that writes to w with s, whose every field holds
// its value (package logsink applies the defaults and checks them), but
// Report, nil for JSONReport. Its drain workers run until Close. It
// returns the sink's error when the sink refuses s.
func New(w io.Writer, s Settings) (*Writer, error) {
	if s.Report == nil {
		s.Report = JSONReport
	}
	s.BatchSize = min(s.BatchSize, s.RingCapacity)
	reserve := s.RingCapacity / 8
	if reserve == 0 && s.RingCapacity > 1 {
		reserve = 1
	}
	s.lowLimit = int64(s.RingCapacity - reserve)
	s.assistMark = int64(s.RingCapacity / 4)
	c := &Writer{dst: w, opts: s, logger: s.Logger, shards: make([]shardState, s.Shards), closeDone: make(chan struct{}), epoch: time.Now()}
	c.errs.name = s.Name
	c.closing, c.stopWaits = context.WithCancel(context.Background())
	cfg := sink.Config[*Record]{
		Name:         s.Name,
		Shards:       s.Shards,
		RingCapacity: s.RingCapacity,
		BatchSize:    s.BatchSize,
		MaxDelay:     s.MaxDelay,
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
		DisableHandOff:   s.DisableHandOff,
	}
	if s.MaxQueuedBytes > 0 {
		cfg.SizeOf, cfg.MaxQueuedBytes = heapBytes, s.MaxQueuedBytes
	}
	if s.SpillDir != "" {
		cfg.Spill = sink.Spill[*Record]{Dir: s.SpillDir, MaxBytes: s.SpillBytes, Codec: entryCodec{c}, SyncInterval: s.SpillSync}
	}
	var err error
	c.sink, err = sink.New(cfg, sink.ActionFunc[*Record](c.drain))
	if err != nil {
		c.stopWaits()
		return nil, err
	}
	c.handles = make([]*sink.Handle[*Record], s.Shards)
	c.hooks = make([]sinkhook.Shard, s.Shards)
	for k, left := uint64(0), s.Shards; left > 0; k++ {
		if sh := c.sink.HandleFor(k); c.handles[sh.Shard()] == nil {
			c.handles[sh.Shard()] = sh
			c.hooks[sh.Shard()] = sinkhook.ShardOf(sh)
			left--
		}
	}
	c.root = Stream{w: c, shard: 0, sh: c.handles[0]}
	return c, nil
}

// SetReport makes report the Writer's drop report (Settings.Report). It is
// for package frontend, whose New makes a logsink.Writer first: it must
// come before the Writer is used, on the goroutine that made it (no drain
// worker reads Report).
func (w *Writer) SetReport(report func(Drops) *Record) {
	if report != nil {
		w.opts.Report = report
	}
}

// Owned is what a logsink.Writer embeds, so that Of finds its engine: it
// has no exported method or field, so the users of logsink, who cannot
// import this package, reach nothing through it.
type Owned struct{ w *Writer }

// Own returns the Owned of w.
func Own(w *Writer) Owned { return Owned{w} }

func (o Owned) engine() *Writer { return o.w }

// Of returns the engine of x, a *logsink.Writer (which embeds an Owned):
// how package frontend reaches the engine of the Writer that
// logsink.New made.
func Of(x interface{ engine() *Writer }) *Writer { return x.engine() }

// Write is logsink.Writer.Write: p as one record at Settings.Level
// through the root Stream.
func (w *Writer) Write(p []byte) (int, error) { return w.root.WriteLevel(w.opts.Level, p) }

// WriteLevel is logsink.Writer.WriteLevel, through the root Stream.
func (w *Writer) WriteLevel(l slog.Level, p []byte) (int, error) { return w.root.WriteLevel(l, p) }

// Root returns the Writer's own Stream, the one that Write uses (shard 0).
func (w *Writer) Root() Stream { return w.root }

// Stream returns a Stream on the next shard, round-robin
// (logsink.Writer.Stream).
func (w *Writer) Stream() Stream {
	i := int(w.next.Add(1) % uint64(len(w.shards)))
	return Stream{w: w, shard: i, sh: w.handles[i]}
}

// Shards returns the number of shards.
func (w *Writer) Shards() int { return len(w.shards) }

// MaxDrainTurn returns the longest drain turn so far (one Drain call: the
// copies and the Writes of one batch), the time a worker held a P.
func (w *Writer) MaxDrainTurn() time.Duration { return time.Duration(w.maxTurn.Load()) }
