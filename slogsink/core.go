package slogsink

import (
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/sink"
)

// cacheLine is the padding between the per-shard producer counters, so that
// producers of different shards do not write the same cache line (128: the
// pair of lines that adjacent-line prefetchers fetch together).
const cacheLine = 128

// core is what every handler derived from one New shares. Its counters, and
// those of shardState, are sync/atomic types, which keep 64-bit words
// 8-byte aligned on 32-bit platforms too. The fields that every logging
// call reads come first and share their cache lines with no field that
// anything writes while the handler runs: the drain workers' and With's
// words sit behind padding, so a logging call does not miss its cache
// each time a worker takes the write lock.
type core struct {
	sink   *sink.Sink[entry]
	w      io.Writer
	opts   settled
	logger *slog.Logger
	shards []shardState
	// handles[i] pushes into shard i.
	handles []*sink.Handle[entry]
	// rootFormat is the Format handler New made, with no attributes or
	// groups, which formats the drop reports.
	rootFormat slog.Handler
	epoch      time.Time

	_ [cacheLine]byte
	// closed is set by Close before it waits for inflight to reach zero on
	// every shard; see Handle.
	closed      atomic.Uint32
	closedDrops [levels]atomic.Uint64 // records handled after Close, per level
	_           [cacheLine]byte

	// fw is the writer of every Format handler: read by every logging
	// call, its lock written only in locked mode (by every logging call).
	fw formatWriter
	_  [cacheLine]byte

	next atomic.Uint64 // the round-robin cursor for the shards of derived handlers
	_    [cacheLine]byte

	wmu       sync.Mutex    // serialises the Writes
	written   atomic.Uint64 // records in Writes that succeeded
	failed    atomic.Uint64 // records lost to an error or a panic
	empty     atomic.Uint64 // records the Format handler wrote no bytes for
	abandoned atomic.Uint64 // records given up on when Close's ctx ended
	panics    atomic.Uint64 // recovered panics and Goexits
	lastPanic atomic.Int64  // Unix ns of the last panic report; 0 before the first
	maxTurn   atomic.Int64  // the longest Drain call so far, in ns (for the benchmarks)
	// writeStart is the time, in ns since the core's epoch, at which the
	// Write in progress began, or 0 when none is. Callers read it only
	// when a ring backs up.
	writeStart atomic.Int64
	lastAssist atomic.Int64 // the time of the last yield of a caller, in ns since epoch
	errs       errorCalls

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
	queued atomic.Int64
	_      [cacheLine - 8]byte
	// inflight counts the Handle and Flush calls between their closed
	// check and their push. Only they and Close touch it: it has a line
	// of its own, apart from queued, which the worker writes.
	inflight atomic.Int64
	_        [cacheLine - 8]byte

	// Written only when records are dropped and when their reports are
	// pushed and drained.
	pendingHint atomic.Uint64         // > 0 when pending may hold counts
	pending     [levels]atomic.Uint64 // dropped and not yet reported in the stream, per level
	dropped     [levels]atomic.Uint64 // dropped, in total, per level
	markers     atomic.Int64          // markers counted in queued
	forBytes    atomic.Uint64         // of dropped, those shed for bytes (MaxQueuedBytes)
	_           [cacheLine - 8 - 16*levels - 16]byte

	// Drain side: the shard's worker.
	mu  sync.Mutex
	out []byte // the Write being assembled, at most maxWrite bytes
}
