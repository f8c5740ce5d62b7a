package slogsink

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/shardedsink/shardedsink/sink"
)

// Handler is an slog.Handler that never waits for the writer. See the
// package documentation for what it promises and what it costs.
//
// A Handler is safe for concurrent use. The handlers derived from it with
// WithAttrs and WithGroup share its sink, writer and counters; Flush, Close
// and the counters of any of them act on all of them.
type Handler struct {
	c     *core
	shard int                 // the shard every record of this handler goes to
	sh    *sink.Handle[entry] // pushes into that shard
	// fmt is the Format handler of this handler, derived from its
	// parent's with one WithAttrs or WithGroup; nil when that call
	// panicked, and lazy builds it again.
	fmt  slog.Handler
	lazy *lazyFormat
}

// New returns a Handler that writes to w. Records are formatted by
// opts.Format (default slog.NewJSONHandler) on the goroutine that logs, and
// their bytes travel through the sink; the drain workers copy the bytes of
// a batch into one Write of at most 256 KiB (a longer record is written
// alone). Writes never overlap, so w need not be safe for
// concurrent use.
//
// New returns an error wrapping [ErrInvalidOptions] that names the field and
// the value of every invalid option (a nil w, a negative size other than
// MaxQueuedBytes, a size beyond the sink's limits, a Format that returns
// nil or panics); nothing is started then. Otherwise the drain workers run
// until [Handler.Close].
func New(w io.Writer, opts *Options) (*Handler, error) {
	o, err := opts.settle(w)
	if err != nil {
		return nil, err
	}
	c := &core{w: w, opts: o, logger: o.logger, shards: make([]shardState, o.shards), closeDone: make(chan struct{}), epoch: time.Now()}
	if c.logger == nil {
		c.logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	c.fw.direct = o.direct
	if c.rootFormat, err = o.newFormat(&c.fw); err != nil {
		return nil, err
	}
	cfg := sink.Config[entry]{
		Name:         "slogsink",
		Shards:       o.shards,
		RingCapacity: o.ringCapacity,
		BatchSize:    o.batchSize,
		MaxDelay:     o.maxDelay,
		// The records of one shard are written by its worker alone, in
		// ring order: that is the order promise.
		DisableStealing: true,
		// Drops are counted and reported by the handler; the sink drops
		// only for bytes (admission keeps every ring below its capacity),
		// and Handle counts those too.
		OnOverload: func(sink.Overload) {},
		Logger:     c.logger,
	}
	if o.maxQueued > 0 {
		cfg.SizeOf, cfg.MaxQueuedBytes = heapBytes, o.maxQueued
	}
	c.sink, err = sink.New(cfg, sink.ActionFunc[entry](c.drain))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	c.handles = make([]*sink.Handle[entry], o.shards)
	for k, left := uint64(0), o.shards; left > 0; k++ {
		if sh := c.sink.HandleFor(k); c.handles[sh.Shard()] == nil {
			c.handles[sh.Shard()] = sh
			left--
		}
	}
	return &Handler{c: c, shard: 0, sh: c.handles[0], fmt: c.rootFormat}, nil
}

// Enabled reports whether level is at or above the handler's Level. It runs
// on the caller's goroutine and is all that a disabled record costs.
func (h *Handler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= h.c.opts.hopts.Level.Level()
}

// Handle formats r with the Format handler, on the calling goroutine, hands
// the bytes to the handler's shard (in the ring slot itself, for a record
// of up to 352 bytes) and returns nil.
// It never waits for the writer or for a drain worker. With [JSON] and
// [Text] it takes no lock of slogsink's (slog's handler holds its own for
// one copy of the bytes); with another Format it waits for the other
// goroutines formatting through the same New (see Options.Format). While
// its ring backs up, one call per 100 µs yields the processor so that the
// drain worker gets a turn (see the package doc).
//
// A record is dropped and counted (see [Handler.Stats]) instead when its
// shard's ring is full; below KeepLevel already when the ring is full but
// for the reserve that only records at or above KeepLevel may use. Such a
// dropped record costs no formatting. A record longer than a slot is
// dropped, once formatted, when the bytes its shard holds would pass the
// shard's share of Options.MaxQueuedBytes (below KeepLevel, seven eighths
// of it; counted in Stats.DroppedForBytes too). The next record the shard
// accepts carries, in front of it in its own ring slot, a [DroppedMessage]
// record that says how many were dropped, and at which levels. After
// [Handler.Close] every record is dropped and counted.
//
// A Format handler (or its ReplaceAttr) that returns an error, panics or
// calls runtime.Goexit loses that record only: it is counted in Errors
// (a panic also in Panics) and OnError receives the error; the panic does
// not reach the caller. A record it writes no bytes for is counted in
// Empty. ctx is passed to the Format handler and not kept.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	c := h.c
	st := &c.shards[h.shard]
	lv := levelIndex(r.Level)
	// Close stores closed, then waits for every inflight to read zero; this
	// add comes before the load of closed. Go's atomics are sequentially
	// consistent, so either this load sees closed, or Close sees this call
	// in flight and waits for its push before it shuts the sink down: no
	// record is pushed into a sink that nobody drains any more. The
	// deferred add runs even when the Format handler calls Goexit.
	st.inflight.Add(1)
	defer st.inflight.Add(-1)
	if c.closed.Load() != 0 {
		c.closedDrops[lv].Add(1)
		return nil
	}
	limit := c.opts.lowLimit
	if r.Level >= c.opts.keepLevel {
		limit = int64(c.opts.ringCapacity)
	}
	q := st.queued.Load()
	if q > c.opts.assistMark && c.assistTurn() {
		// The ring is backing up and the worker may be runnable but
		// waiting for a P behind busy loggers: let it run (guarantee 1 in
		// the package doc).
		runtime.Gosched()
		q = st.queued.Load()
	}
	if q >= limit {
		st.drop(lv)
		return nil
	}
	f := h.fmt
	if f == nil {
		if f = h.lazy.get(c); f == nil {
			c.failed.Add(1) // its With failed again: counted and reported there
			return nil
		}
	}
	b, err := c.format(ctx, f, r, true, "the Format handler")
	if b == nil {
		switch {
		case err == nil:
			c.empty.Add(1)
		case err != errRecovered: // a panic is counted by format
			c.failRecords(1, err)
		}
		return nil
	}
	if b.big != nil && r.Level < c.opts.keepLevel && c.opts.maxQueued > 0 && !h.belowReserve(cap(b.big)) {
		putEntry(b)
		st.dropForBytes(lv)
		return nil
	}
	// The report of earlier drops travels in this record's slot, in front
	// of it: in the gap, and taking no room of its own. pendingHint is
	// written only when a record is shed, so on the accept path this is a
	// load of a line that stays in this core's cache.
	var report *entry
	var counts [levels]uint64
	var total uint64
	if st.pendingHint.Load() != 0 {
		if counts, total = st.takePending(); total != 0 {
			// nil when the Format handler fails on it: counted there, and
			// the records it counted stay in Dropped.
			report = c.formatReport(counts, total)
		}
	}
	if st.queued.Add(1) > limit {
		st.queued.Add(-1)
		putEntry(b)
		if report != nil {
			putEntry(report)
			st.givePending(counts, total)
		}
		st.drop(lv)
		return nil
	}
	en := b
	if report != nil {
		en = getEntry()
		*en = makeEntry(report.bytes(), b.bytes(), h.shard, false)
		putEntry(report)
		putEntry(b)
	}
	en.shard = int32(h.shard)
	pushed := h.sh.Push(*en)
	putEntry(en)
	if !pushed {
		// Refused for bytes (MaxQueuedBytes), not for slots: queued, which
		// admission kept at most the ring's capacity, is never below the
		// ring's length. Or, once Close has begun, refused by a sink that
		// Close shut down when its ctx ended before this push: a drop
		// after Close, not one for bytes. The report it carried goes back.
		st.queued.Add(-1)
		if report != nil {
			st.givePending(counts, total)
		}
		if c.closed.Load() != 0 {
			st.drop(lv)
		} else {
			st.dropForBytes(lv)
		}
	}
	return nil
}

// belowReserve reports whether a record of n heap bytes below KeepLevel
// fits into the handler's shard without passing seven eighths of its share
// of MaxQueuedBytes, the rest being the reserve of the records at or above
// KeepLevel (guarantee 5). It is a soft view, one atomic load: records in
// flight on other goroutines may take the room it saw. A shard that holds
// nothing takes a record of any size, as the sink does.
func (h *Handler) belowReserve(n int) bool {
	queued, share := h.sh.QueuedBytes()
	return queued == 0 || queued+int64(n) <= share-share/8
}

// assistAfter is how long a Write must have been in progress before
// callers whose ring backs up yield anyway: a worker whose Write returned
// (a syscall that ended, a timer that fired) waits for a P like any other
// goroutine, up to the scheduler's 10 ms slice while loggers keep every P
// busy, and yielding lets it have one; before that, yielding would not
// help a worker that is still in its Write.
const assistAfter = time.Millisecond

// assistEvery is the least time between two yields of callers whose ring
// backs up. One yield lets the scheduler of that P run the worker if it is
// runnable (in the run queue, or readied by a timer that fired or a
// syscall that returned), and a few calls in a thousand pay for it, not
// every call: yielding on every call kept the log complete at 16 and 64
// goroutines but put the scheduler's wait (tens of microseconds to
// milliseconds) into the p99 of the call.
const assistEvery = 100 * time.Microsecond

// assistTurn reports whether a caller whose ring backs up should yield:
// not while a Write has been in progress for less than assistAfter, when
// yielding would not help a worker that is still in its Write; otherwise
// one caller per assistEvery (of callers that ask at once, one gets the
// turn).
func (c *core) assistTurn() bool {
	now := int64(time.Since(c.epoch))
	if ws := c.writeStart.Load(); ws != 0 && now-ws <= int64(assistAfter) {
		return false
	}
	last := c.lastAssist.Load()
	return now-last > int64(assistEvery) && c.lastAssist.CompareAndSwap(last, now)
}
