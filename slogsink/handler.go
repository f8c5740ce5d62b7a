package slogsink

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/sink"
)

// DroppedMessage is the message of the record that reports, in the log
// stream, how many records were shed just before it. Its level is
// slog.LevelWarn; its attributes are "dropped", a uint64, and the group
// "dropped_by_level", which holds the count of each level that lost
// records ("DEBUG", "INFO", "WARN", "ERROR"; records of other levels are
// counted with the named level just below them).
const DroppedMessage = "slogsink: dropped records"

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
	ops   []op                // the WithAttrs and WithGroup calls from the root, in order
	enc   encoder             // formats this handler's records on the caller
}

// op is one WithAttrs (attrs != nil) or WithGroup call.
type op struct {
	group string
	attrs []slog.Attr
}

// encoder is one handler's Format handler and the writer it writes into.
// mu is held for the whole of one Format call, so that the bytes that
// arrive in Write while it is held are that call's record.
type encoder struct {
	mu  sync.Mutex
	fmt slog.Handler // nil until built; built under mu or before the handler is shared
	cur *buffer      // the buffer of the record being formatted; under mu
}

// Write appends p to the record being formatted. It is the writer of the
// encoder's Format handler and is called only while mu is held.
func (e *encoder) Write(p []byte) (int, error) {
	e.cur.b = append(e.cur.b, p...)
	return len(p), nil
}

// buffer is the scratch space that one record is formatted into, on the
// caller; its bytes are then copied into the entry that travels.
type buffer struct{ b []byte }

// bufPool recycles the scratch buffers. A caller takes one and puts it
// back within the same call, on the same P as a rule, as slog's own
// handlers do with theirs.
var bufPool = sync.Pool{New: func() any { return &buffer{b: make([]byte, 0, 512)} }}

// maxPooledBuffer is the largest buffer put back into bufPool: a record of
// a megabyte should not pin a megabyte per pooled buffer.
const maxPooledBuffer = 64 << 10

func getBuffer() *buffer { return bufPool.Get().(*buffer) }

func putBuffer(b *buffer) {
	if cap(b.b) > maxPooledBuffer {
		return
	}
	b.b = b.b[:0]
	bufPool.Put(b)
}

// inlineSize is the longest formatted record that travels inside its ring
// slot; a longer one allocates its bytes once. A record of five attributes
// and a time, a level and a message takes about 150 bytes in JSON, 250
// with AddSource.
const inlineSize = 352

// entry is what travels through the sink: the formatted bytes of one
// record, or of a drop report (marker), in the slot itself when they fit.
// With the ring's sequence number a slot takes 400 bytes on 64-bit
// platforms.
type entry struct {
	big    []byte // the bytes, when longer than inlineSize
	n      int32  // the length of the bytes in inline
	shard  int32
	marker bool
	inline [inlineSize]byte
}

// makeEntry copies p into a new entry of shard i.
func makeEntry(p []byte, i int, marker bool) entry {
	e := entry{shard: int32(i), marker: marker}
	if len(p) <= inlineSize {
		e.n = int32(copy(e.inline[:], p))
	} else {
		e.big = append([]byte(nil), p...)
	}
	return e
}

// bytes returns the formatted bytes of e.
func (e *entry) bytes() []byte {
	if e.big != nil {
		return e.big
	}
	return e.inline[:e.n]
}

// cacheLine is the padding between the per-shard producer counters, so that
// producers of different shards do not write the same cache line (128: the
// pair of lines that adjacent-line prefetchers fetch together).
const cacheLine = 128

// core is what every handler derived from one New shares. Its counters, and
// those of shardState, are sync/atomic types, which keep 64-bit words
// 8-byte aligned on 32-bit platforms too.
type core struct {
	sink    *sink.Sink[entry]
	w       io.Writer
	wmu     sync.Mutex // serialises the Writes
	errMu   sync.Mutex // serialises the calls of OnError
	opts    settled
	logger  *slog.Logger
	shards  []shardState
	roots   []*Handler    // roots[i] is the underived handler of shard i
	handles atomic.Uint64 // round-robin cursor for the shards of derived handlers

	_ [cacheLine]byte
	// closed is set by Close before it waits for inflight to reach zero on
	// every shard; see Handle.
	closed      atomic.Uint32
	closedDrops [levels]atomic.Uint64 // records handled after Close, per level
	_           [cacheLine]byte

	written   atomic.Uint64 // records in Writes that succeeded
	failed    atomic.Uint64 // records lost to an error or a panic
	abandoned atomic.Uint64 // records given up on when Close's ctx ended
	panics    atomic.Uint64 // recovered panics and Goexits
	lastPanic atomic.Int64  // Unix ns of the last panic report; 0 before the first
	maxTurn   atomic.Int64  // the longest Drain call so far, in ns (for the benchmarks)
	// writeStart is the time, in ns since the core's epoch, at which the
	// Write in progress began, or 0 when none is. Callers read it only
	// when a ring backs up.
	writeStart atomic.Int64
	lastAssist atomic.Int64 // the time of the last yield of a caller, in ns since epoch
	epoch      time.Time

	closeOnce sync.Once
	closeErr  error
	closeDone chan struct{} // closed once closeErr is set
}

// shardState is one shard's part of the core.
type shardState struct {
	_ [cacheLine]byte
	// queued counts the entries pushed into this shard and not yet taken
	// by a Drain call: it is added to before the push and subtracted from
	// after the pops, so it is never below the ring's length. Admission
	// keeps it at most the ring's capacity, so a push that passed
	// admission always finds room.
	queued   atomic.Int64
	inflight atomic.Int64 // Handle and Flush calls between their closed check and their push
	_        [cacheLine - 16]byte

	// Written only when records are dropped and when their reports are
	// pushed and drained.
	pendingHint atomic.Uint64         // > 0 when pending may hold counts
	pending     [levels]atomic.Uint64 // dropped and not yet reported in the stream, per level
	dropped     [levels]atomic.Uint64 // dropped, in total, per level
	markers     atomic.Int64          // markers counted in queued
	_           [cacheLine - 8 - 16*levels - 8]byte

	// marks formats this shard's drop reports; its Format handler has no
	// attributes or groups.
	marks encoder

	// Drain side: the shard's worker.
	mu  sync.Mutex
	out []byte // the Write being assembled
}

// New returns a Handler that writes to w. Records are formatted by
// opts.Format (default slog.NewJSONHandler) on the goroutine that logs, and
// their bytes travel through the sink; the drain workers copy the bytes of
// a batch into one Write of at most 256 KiB (a longer record is written
// alone). Writes never overlap, so w need not be safe for
// concurrent use.
//
// New returns an error wrapping [ErrInvalidOptions] that names the field and
// the value of every invalid option (a nil w, a negative size, a size
// beyond the sink's limits, a Format that returns nil or panics); nothing
// is started then. Otherwise the drain workers run until [Handler.Close].
func New(w io.Writer, opts *Options) (*Handler, error) {
	o, err := opts.settle(w)
	if err != nil {
		return nil, err
	}
	c := &core{w: w, opts: o, logger: o.logger, shards: make([]shardState, o.shards), closeDone: make(chan struct{}), epoch: time.Now()}
	if c.logger == nil {
		c.logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	for i := range c.shards {
		st := &c.shards[i]
		if st.marks.fmt, err = o.newFormat(&st.marks); err != nil {
			return nil, err
		}
	}
	c.sink, err = sink.New(sink.Config[entry]{
		Name:         "slogsink",
		Shards:       o.shards,
		RingCapacity: o.ringCapacity,
		BatchSize:    o.batchSize,
		// The records of one shard are written by its worker alone, in
		// ring order: that is the order promise.
		DisableStealing: true,
		// Drops are counted and reported by the handler; the sink never
		// drops (admission keeps every ring below its capacity).
		OnOverload: func(sink.Overload) {},
		Logger:     c.logger,
	}, sink.ActionFunc[entry](c.drain))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	// One root handler per shard: New's is roots[0]; derived handlers take
	// their shard's handle.
	c.roots = make([]*Handler, o.shards)
	for k, left := uint64(0), o.shards; left > 0; k++ {
		sh := c.sink.HandleFor(k)
		if i := sh.Shard(); c.roots[i] == nil {
			r := &Handler{c: c, shard: i, sh: sh}
			if r.enc.fmt, err = o.newFormat(&r.enc); err != nil {
				_ = c.sink.Shutdown(context.Background())
				return nil, err
			}
			c.roots[i] = r
			left--
		}
	}
	return c.roots[0], nil
}

// Enabled reports whether level is at or above the handler's Level. It runs
// on the caller's goroutine and is all that a disabled record costs.
func (h *Handler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= h.c.opts.hopts.Level.Level()
}

// Handle formats r with the Format handler, on the calling goroutine, hands
// the bytes to the handler's shard (in the ring slot itself, for a record
// of up to 352 bytes) and returns nil.
// It never waits for the writer or for a drain worker; it waits only for
// another goroutine formatting through the same Handler (the Handlers that
// With makes per request or per worker have one caller each), and, while
// its ring backs up, one call per 100 µs yields the processor so that the
// drain worker gets a turn (see the package doc).
//
// A record is dropped and counted (see [Handler.Stats]) instead when its
// shard's ring is full; below KeepLevel already when the ring is full but
// for the reserve that only records at or above KeepLevel may use. A
// dropped record costs no formatting. The next record the shard accepts is
// preceded in the stream by a [DroppedMessage] record that says how many
// were dropped, and at which levels. After [Handler.Close] every record is
// dropped and counted.
//
// A Format handler (or its ReplaceAttr) that returns an error, panics or
// calls runtime.Goexit loses that record only: it is counted in Errors
// (a panic also in Panics) and OnError receives the error; the panic does
// not reach the caller. ctx is passed to the Format handler and not kept.
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
	// pendingHint is written only when a record is shed, so on the accept
	// path this is a load of a line that stays in this core's cache. When a
	// report of earlier drops cannot go in first, the record is dropped
	// too: written ahead of the report, it would put the report after the
	// gap instead of in it.
	if q >= limit ||
		st.pendingHint.Load() != 0 && !c.reportDrops(h.shard) {
		st.drop(lv)
		return nil
	}
	b, err := h.encode(ctx, r)
	if b == nil {
		if err != nil {
			c.failRecords(1, err)
		}
		return nil // a panic is counted by encode
	}
	if st.queued.Add(1) > limit {
		st.queued.Add(-1)
		putBuffer(b)
		st.drop(lv)
		return nil
	}
	en := makeEntry(b.b, h.shard, false)
	putBuffer(b)
	if !h.sh.Push(en) {
		// Not reached: queued, which admission kept at most the ring's
		// capacity, is never below the ring's length.
		st.queued.Add(-1)
		st.drop(lv)
	}
	return nil
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

// encode formats r with h's Format handler into a fresh buffer and returns
// it, or returns nil when the Format handler returned an error (returned
// too, for the caller to count once the lock is released: OnError must not
// run under it), panicked or called runtime.Goexit (counted here).
func (h *Handler) encode(ctx context.Context, r slog.Record) (out *buffer, err error) {
	e := &h.enc
	b := getBuffer()
	e.mu.Lock()
	returned := false
	defer func() {
		e.cur = nil
		e.mu.Unlock()
		if returned {
			return
		}
		// A panic, or a Goexit (recover returns nil), in the Format
		// handler: the record is lost, counted; a Goexit goes on after
		// this.
		p := recover()
		putBuffer(b)
		h.c.failed.Add(1)
		h.c.reportPanic("the Format handler", p)
		out, err = nil, nil
	}()
	if e.fmt == nil {
		f, err := h.buildFormat()
		if err != nil {
			returned = true
			putBuffer(b)
			return nil, err
		}
		e.fmt = f
	}
	e.cur = b
	err = e.fmt.Handle(ctx, r)
	returned = true
	if err != nil {
		putBuffer(b)
		return nil, err
	}
	return b, nil
}

// buildFormat makes h's Format handler: a new one over h's encoder, with
// h's WithAttrs and WithGroup calls applied in order.
func (h *Handler) buildFormat() (slog.Handler, error) {
	f, err := h.c.opts.newFormat(&h.enc)
	if err != nil {
		return nil, err
	}
	for _, o := range h.ops {
		if o.attrs != nil {
			f = f.WithAttrs(o.attrs)
		} else {
			f = f.WithGroup(o.group)
		}
	}
	return f, nil
}

// drop counts one record of level bucket lv dropped on this shard, to be
// reported by the next marker. The level count comes before the hint, so a
// reporter that sees the hint finds the count (or an earlier reporter has
// taken it).
func (st *shardState) drop(lv int) {
	st.dropped[lv].Add(1)
	st.pending[lv].Add(1)
	st.pendingHint.Add(1)
}

// takePending hands the counts not yet reported on st to the caller: each
// swap gives a count to exactly one caller.
func (st *shardState) takePending() (counts [levels]uint64, total uint64) {
	if st.pendingHint.Swap(0) == 0 {
		return counts, 0
	}
	for i := range counts {
		counts[i] = st.pending[i].Swap(0)
		total += counts[i]
	}
	return counts, total
}

// givePending puts counts back for a later report.
func (st *shardState) givePending(counts [levels]uint64, total uint64) {
	for i, n := range counts {
		if n != 0 {
			st.pending[i].Add(n)
		}
	}
	st.pendingHint.Add(total)
}

// reportDrops pushes a marker for the records dropped on shard i so far and
// reports whether the ring took it (or there was nothing to report). When
// the marker finds the ring full, the counts go back to pending for a later
// record to report. Markers may use the whole ring, reserve included.
func (c *core) reportDrops(i int) bool {
	st := &c.shards[i]
	counts, total := st.takePending()
	if total == 0 {
		return true
	}
	if st.queued.Add(1) > int64(c.opts.ringCapacity) {
		st.queued.Add(-1)
		st.givePending(counts, total)
		return false
	}
	b := c.formatMarker(st, counts, total)
	if b == nil {
		// The Format handler failed on the report: it is lost (counted in
		// Errors or Panics), the records it counted stay in Dropped, and
		// the records that follow go on.
		st.queued.Add(-1)
		return true
	}
	st.markers.Add(1)
	en := makeEntry(b.b, i, true)
	putBuffer(b)
	if !c.roots[i].sh.Push(en) {
		// Not reached; see Handle.
		st.markers.Add(-1)
		st.queued.Add(-1)
		st.givePending(counts, total)
		return false
	}
	return true
}

// formatMarker formats the drop report for counts with the shard's marker
// encoder. It returns nil when the Format handler fails on it; that error
// or panic is counted (Errors without a record, or Panics) and reported.
func (c *core) formatMarker(st *shardState, counts [levels]uint64, total uint64) (out *buffer) {
	r := slog.NewRecord(time.Now(), slog.LevelWarn, DroppedMessage, 0)
	by := make([]slog.Attr, 0, levels)
	for i, n := range counts {
		if n != 0 {
			by = append(by, slog.Uint64(levelNames[i], n))
		}
	}
	r.AddAttrs(slog.Uint64("dropped", total), slog.Attr{Key: "dropped_by_level", Value: slog.GroupValue(by...)})
	e := &st.marks
	b := getBuffer()
	e.mu.Lock()
	returned, unlocked := false, false
	defer func() {
		if !unlocked {
			e.cur = nil
			e.mu.Unlock()
		}
		if !returned {
			putBuffer(b)
			c.reportPanic("the Format handler, formatting a drop report", recover())
			out = nil
		}
	}()
	e.cur = b
	if err := e.fmt.Handle(context.Background(), r); err != nil {
		returned = true
		putBuffer(b)
		e.cur = nil
		e.mu.Unlock()
		unlocked = true
		c.failRecords(0, err) // OnError, not under the lock
		return nil
	}
	returned = true
	return b
}

// WithAttrs returns a handler that adds attrs to every record, in a shard
// of its own (the next one, round-robin). Its Format handler is built now,
// on the caller, as a synchronous handler's would be: the attributes'
// slog.LogValuer values are resolved and formatted once, here. The cost is
// one call of Format plus the WithAttrs and WithGroup calls from the root
// replayed on it.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	return h.derive(op{attrs: attrs}) // slog.Handler: the handler owns the slice
}

// WithGroup returns a handler that puts the attributes that follow in group
// name, in a shard of its own (the next one, round-robin). An empty name
// returns h.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return h.derive(op{group: name})
}

// derive makes the handler for h's ops plus o. A Format handler that fails
// to build (an error, or a ReplaceAttr that panics in WithAttrs) is counted
// and reported, and built again at the handler's first record.
func (h *Handler) derive(o op) *Handler {
	c := h.c
	i := int(c.handles.Add(1) % uint64(len(c.shards)))
	d := &Handler{c: c, shard: i, sh: c.roots[i].sh, ops: append(slices.Clip(h.ops), o)}
	func() {
		returned := false
		defer func() {
			if !returned {
				c.reportPanic("the Format handler's WithAttrs or WithGroup", recover())
			}
		}()
		f, err := d.buildFormat()
		returned = true
		if err != nil {
			c.failRecords(0, err)
			return
		}
		d.enc.fmt = f
	}()
	return d
}
