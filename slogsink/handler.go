package slogsink

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/sink"
)

// DroppedMessage is the message of the record that reports, in the log
// stream, how many records were shed just before it. Its level is
// slog.LevelWarn and its one attribute is "dropped", a uint64.
const DroppedMessage = "slogsink: dropped records"

// Handler is an slog.Handler that never blocks the goroutine that logs. See
// the package documentation for what it promises and what it costs.
//
// A Handler is safe for concurrent use. The handlers derived from it with
// WithAttrs and WithGroup share its sink, writer and counters; Flush, Close
// and the counters of any of them act on all of them.
type Handler struct {
	c     *core
	shard int                 // the shard every record of this handler goes to
	sh    *sink.Handle[entry] // pushes into that shard
	ops   []op                // the WithAttrs and WithGroup calls from the root, in order

	// fmt is the Format handler with ops applied, writing into the shard's
	// buffer. It is built by the first drain that formats a record of this
	// handler, under the shard's drain mutex, and read only under it.
	fmt slog.Handler
}

// op is one WithAttrs (attrs != nil) or WithGroup call.
type op struct {
	group string
	attrs []slog.Attr
}

// entry is what travels through the sink: a cloned record and the handler
// that took it, or a marker for records dropped just before it (h == nil).
type entry struct {
	h       *Handler
	r       slog.Record
	shard   int
	dropped uint64
}

// cacheLine is the padding between the per-shard producer counters, so that
// producers of different shards do not write the same cache line (128: the
// pair of lines that adjacent-line prefetchers fetch together).
const cacheLine = 128

// core is what every handler derived from one New shares.
type core struct {
	sink    *sink.Sink[entry]
	w       io.Writer
	wmu     sync.Mutex // serialises the Writes of whole batches
	errMu   sync.Mutex // serialises the calls of OnError
	opts    settled
	shards  []shardState
	roots   []*Handler // roots[i] is the underived handler of shard i
	handles uint64     // round-robin cursor for the shards of derived handlers

	_ [cacheLine]byte
	// closed is set by Close before it waits for inflight to reach zero on
	// every shard; see Handle.
	closed      uint32
	closedDrops uint64 // records handled after Close
	_           [cacheLine]byte

	written   uint64 // records in Writes that succeeded
	errs      uint64 // failed Writes plus Format errors
	closeOnce sync.Once
	closeErr  error
	closeDone chan struct{} // closed once closeErr is set
}

// shardState is one shard's part of the core.
type shardState struct {
	// Producer side, on its own cache lines. Only Handle, Flush and Close
	// touch these words.
	_        [cacheLine]byte
	inflight int64  // Handle calls between their closed check and their push
	pending  uint64 // records dropped on this shard and not yet reported in the stream
	dropped  uint64 // records dropped on this shard, in total
	_        [cacheLine - 24]byte

	// Drain side: the shard's worker (or a worker that stole from it).
	mu   sync.Mutex
	buf  bytes.Buffer // the batch being formatted
	base slog.Handler // Format over buf, no attributes or groups
}

// New returns a Handler that writes to w. Records are formatted by
// opts.Format (default slog.NewJSONHandler) on the handler's drain workers,
// which write each batch of records with one Write call; Writes never
// overlap, so w need not be safe for concurrent use. A nil opts means the
// defaults.
//
// New returns an error wrapping [ErrInvalidOptions] that names the field and
// the value of every invalid option (a nil w, a negative size); nothing is
// started then. Otherwise the drain workers run until [Handler.Close].
func New(w io.Writer, opts *Options) (*Handler, error) {
	o, err := opts.settle(w)
	if err != nil {
		return nil, err
	}
	c := &core{w: w, opts: o, shards: make([]shardState, o.shards), closeDone: make(chan struct{})}
	for i := range c.shards {
		st := &c.shards[i]
		st.base = o.format(&st.buf, &o.hopts)
	}
	logger := o.logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	c.sink, err = sink.New(sink.Config[entry]{
		Name:         "slogsink",
		Shards:       o.shards,
		RingCapacity: o.ringCapacity,
		BatchSize:    o.batchSize,
		// The records of one shard are formatted and written by its worker
		// alone, in ring order: that is the order promise.
		DisableStealing: true,
		// Drops are reported in the stream and by Dropped; the sink's own
		// report would count the refused markers too, and would go to a
		// logger that may be this handler.
		OnOverload: func(sink.Overload) {},
		Logger:     logger,
	}, sink.ActionFunc[entry](c.drain))
	if err != nil {
		return nil, err // not reached: the options were checked above
	}
	// One root handler per shard: New's is roots[0]; derived handlers take
	// their shard's handle and markers go through the shard's root.
	c.roots = make([]*Handler, o.shards)
	for k, left := uint64(0), o.shards; left > 0; k++ {
		sh := c.sink.HandleFor(k)
		if i := sh.Shard(); c.roots[i] == nil {
			c.roots[i] = &Handler{c: c, shard: i, sh: sh, fmt: c.shards[i].base}
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

// Handle hands a copy of r to the handler's shard and returns nil without
// waiting. When the shard's ring is full the record is dropped and counted
// (see [Handler.Dropped]), and the next record this shard accepts is
// preceded in the stream by a [DroppedMessage] record that says how many
// were dropped. After [Handler.Close] every record is dropped and counted.
//
// Handle copies the record (slog.Record.Clone, which allocates only for a
// record of more than five attributes) and resolves its slog.LogValuer
// values, as a synchronous handler would, so that they are read at the time
// of the call; other values are formatted later, so a value that the caller
// changes after logging (a pointer, a slice, a map) may be formatted with its
// later contents. ctx is not kept.
func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	c := h.c
	st := &c.shards[h.shard]
	// Close stores closed, then waits for every inflight to read zero; this
	// add comes before the load of closed. Go's atomics are sequentially
	// consistent, so either this load sees closed, or Close sees this call
	// in flight and waits for its push before it shuts the sink down: no
	// record is pushed into a sink that nobody drains any more.
	atomic.AddInt64(&st.inflight, 1)
	if atomic.LoadUint32(&c.closed) != 0 {
		atomic.AddInt64(&st.inflight, -1)
		atomic.AddUint64(&c.closedDrops, 1)
		return nil
	}
	// pending is written only when a record is shed, so on the accept path
	// this is a load of a line that stays in this core's cache.
	// When a report of earlier drops cannot go in first, the record is
	// dropped too: written ahead of the report, it would put the report
	// after the gap instead of in it.
	if atomic.LoadUint64(&st.pending) == 0 || c.reportDrops(h.shard) {
		if needsResolve(r) {
			r = resolved(r)
		} else {
			r = r.Clone()
		}
		if h.sh.Push(entry{h: h, r: r, shard: h.shard}) {
			atomic.AddInt64(&st.inflight, -1)
			return nil
		}
	}
	atomic.AddUint64(&st.dropped, 1)
	atomic.AddUint64(&st.pending, 1)
	atomic.AddInt64(&st.inflight, -1)
	return nil
}

// reportDrops pushes a marker for the records dropped on shard i so far and
// reports whether the ring took it (or there was nothing to report). The
// swap hands the count to exactly one caller; when the marker finds the
// ring full, the count goes back to pending for a later record to report.
func (c *core) reportDrops(i int) bool {
	st := &c.shards[i]
	n := atomic.SwapUint64(&st.pending, 0)
	if n == 0 {
		return true
	}
	if !c.roots[i].sh.Push(marker(i, n)) {
		atomic.AddUint64(&st.pending, n)
		return false
	}
	return true
}

// marker is the entry that reports n records dropped on shard i.
func marker(i int, n uint64) entry {
	r := slog.NewRecord(time.Now(), slog.LevelWarn, DroppedMessage, 0)
	r.AddAttrs(slog.Uint64("dropped", n))
	return entry{r: r, shard: i, dropped: n}
}

// WithAttrs returns a handler that adds attrs to every record, in a shard
// of its own (the next one, round-robin). The attributes' slog.LogValuer
// values are resolved now, once; the Format handler formats them once per
// derived handler, when the handler's first record is drained.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	as := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		as[i] = resolveAttr(a)
	}
	return h.derive(op{attrs: as})
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

func (h *Handler) derive(o op) *Handler {
	c := h.c
	i := int(atomic.AddUint64(&c.handles, 1) % uint64(len(c.shards)))
	return &Handler{c: c, shard: i, sh: c.roots[i].sh, ops: append(slices.Clip(h.ops), o)}
}

// formatter returns h's Format handler on shard st, building it the first
// time. The caller holds st.mu.
func (h *Handler) formatter(st *shardState) slog.Handler {
	if h.fmt == nil {
		f := st.base
		for _, o := range h.ops {
			if o.attrs != nil {
				f = f.WithAttrs(o.attrs)
			} else {
				f = f.WithGroup(o.group)
			}
		}
		h.fmt = f
	}
	return h.fmt
}

// drain formats a batch and writes it with one Write. With stealing off, a
// batch holds the records of one shard; the loop would also handle a batch
// that mixed shards, writing one run of each shard at a time.
func (c *core) drain(ctx context.Context, batch []entry) {
	for len(batch) > 0 {
		i := batch[0].shard
		n := 1
		for n < len(batch) && batch[n].shard == i {
			n++
		}
		c.drainRun(ctx, &c.shards[i], batch[:n])
		batch = batch[n:]
	}
}

// drainRun formats entries, all of one shard, into the shard's buffer and
// writes it.
func (c *core) drainRun(ctx context.Context, st *shardState, run []entry) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.buf.Reset()
	records := 0
	for k := range run {
		e := &run[k]
		f := st.base
		if e.h != nil {
			f = e.h.formatter(st)
			records++
		}
		if err := f.Handle(ctx, e.r); err != nil {
			c.fail(err)
		}
	}
	c.write(st.buf.Bytes(), records)
}

// write writes p, which holds whole records, records of them not markers.
func (c *core) write(p []byte, records int) {
	if len(p) == 0 {
		return
	}
	c.wmu.Lock()
	_, err := c.w.Write(p)
	if err != nil {
		c.fail(err)
	} else {
		atomic.AddUint64(&c.written, uint64(records))
	}
	c.wmu.Unlock()
}

// fail counts err and hands it to OnError, one call at a time.
func (c *core) fail(err error) {
	atomic.AddUint64(&c.errs, 1)
	if c.opts.onError != nil {
		c.errMu.Lock()
		defer c.errMu.Unlock()
		c.opts.onError(err)
	}
}
