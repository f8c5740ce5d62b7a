package slogsink

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"time"

	"github.com/shardedsink/shardedsink/internal/fielderr"
	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/sink"
)

// The defaults that the zero value of each [Options] field stands for.
const (
	// DefaultShards is the default number of shards, each with one drain
	// worker that copies formatted records into Writes.
	DefaultShards = logsink.DefaultShards
	// DefaultRingCapacity is the default number of records each shard
	// buffers. A ring slot takes 16 bytes on 64-bit platforms and points
	// to a pooled record buffer of 416 bytes that holds a formatted record
	// of up to 352 bytes: a default ring takes 128 KiB, up to 3.3 MiB more
	// while it is full, plus the records longer than that.
	DefaultRingCapacity = logsink.DefaultRingCapacity
	// DefaultBatchSize is the default number of records a drain worker
	// takes from its ring at once and copies into Writes of at most 256
	// KiB.
	DefaultBatchSize = logsink.DefaultBatchSize
	// DefaultMaxDelay is the default [Options.MaxDelay].
	DefaultMaxDelay = logsink.DefaultMaxDelay
	// DefaultKeepLevel is the default [Options.KeepLevel].
	DefaultKeepLevel = logsink.DefaultKeepLevel
	// DefaultKeepWait is the default [Options.KeepWait].
	DefaultKeepWait = logsink.DefaultKeepWait
	// DefaultMaxQueuedBytes is the default [Options.MaxQueuedBytes]: 64
	// MiB of records longer than a ring slot holds, on top of the slots.
	DefaultMaxQueuedBytes = logsink.DefaultMaxQueuedBytes
)

// ErrInvalidOptions is wrapped by every error that [New] returns for bad
// options. Each such error names the field and the value it rejects.
var ErrInvalidOptions = errors.New("slogsink: invalid options")

// ErrClosed is returned by [Handler.Flush] once the handler is closed.
var ErrClosed = errors.New("slogsink: handler is closed")

// Options configures a [Handler]. A nil *Options, and the zero value of
// every field, means the default.
type Options struct {
	// Level reports the minimum level to log, as in slog.HandlerOptions.
	// Default slog.LevelInfo. Enabled checks it on the caller's goroutine.
	Level slog.Leveler
	// AddSource, as in slog.HandlerOptions, adds the caller's file and line.
	// The PC is taken by the Logger, and turned into a file and line by
	// the Format handler, both on the goroutine that logs.
	AddSource bool
	// ReplaceAttr, as in slog.HandlerOptions, rewrites attributes. It runs
	// on the goroutine that logs (and, for the attributes of With, on the
	// one that calls With). A panic in it costs the record it was
	// formatting, counted in Errors and Panics, and does not reach the
	// caller.
	ReplaceAttr func(groups []string, a slog.Attr) slog.Attr

	// Format makes the handler that formats records: [JSON] (the
	// default), [Text], or any other. New calls it once, with a writer of
	// the handler's own as w and Level, AddSource and ReplaceAttr as opts;
	// every WithAttrs and WithGroup calls the WithAttrs or WithGroup of
	// its parent's Format handler, once. The handlers run on the goroutine
	// that logs; each must write every record it handles to w (in one
	// Write, several or none) before its Handle returns, and must not keep
	// w for anything else. A Format that returns nil is refused by New.
	//
	// [JSON] and [Text] format with no lock of slogsink's: slog's handlers
	// write each record in one Write and return its result, which tells
	// slogsink whose record the bytes are. Any other Format's handlers
	// share w with no such promise, so slogsink holds one lock per New
	// across each of their Handle calls: goroutines that log through the
	// handlers of one New then format one record at a time.
	Format func(w io.Writer, opts *slog.HandlerOptions) slog.Handler

	// Shards is the number of rings, each with one drain worker. Default
	// DefaultShards (2), at most sink.MaxShards.
	Shards int
	// RingCapacity is the number of records each ring holds; a record that
	// finds its ring full is dropped and counted. Default
	// DefaultRingCapacity (8192), at most sink.MaxRingCapacity.
	RingCapacity int
	// BatchSize is the most records a drain worker takes at once. Default
	// DefaultBatchSize (1024), clamped to RingCapacity.
	BatchSize int
	// MaxDelay is the longest a drain worker holds fewer than BatchSize
	// records before it writes them (sink.Config.MaxDelay): a record
	// reaches the writer at most this much later than it would otherwise
	// (plus the timer's lateness). Meanwhile the worker sleeps instead of
	// following the loggers record by record, so that it does not pull
	// the ring's cache lines from under them (what that saves the caller
	// of an Info into a fast writer: docs/benchmarks.md, "Logging", the
	// third table). Flush and Close never wait for it. Default
	// DefaultMaxDelay (100 µs); negative: write at once.
	MaxDelay time.Duration
	// KeepLevel is the level from which records are shed last: an eighth
	// of each ring (one slot in a ring of 2 to 15) is a reserve that only
	// records at or above KeepLevel may fill (a drop report travels in the
	// slot of the record after it), so that while records below it are
	// being dropped, these are not.
	// Default DefaultKeepLevel (slog.LevelWarn); read once, by New.
	KeepLevel slog.Leveler
	// KeepWait is the longest a record at or above KeepLevel waits for
	// room (its ring full, reserve included, or its shard's share of
	// MaxQueuedBytes spent) before it is shed (logsink.Options.KeepWait):
	// the caller parks until a drain worker frees room, the wait ends or
	// Close begins. Those shed so are counted in Stats.WaitedOut and in
	// the drop report's "waited_out". Records below KeepLevel never wait;
	// a record that finds room pays nothing for it. Default
	// DefaultKeepWait (1 ms); negative: never wait.
	KeepWait time.Duration
	// MaxQueuedBytes bounds the memory of the records longer than a ring
	// slot holds (352 bytes), which allocate their bytes: those in the
	// rings and in the batches being written (a Write that stalls keeps
	// its batch counted) never sum to more, so a flood of large records
	// into a stalled writer is shed, counted (Stats.DroppedForBytes) and
	// reported like a full ring, and does not pin the heap. Each shard has
	// MaxQueuedBytes/Shards; records below KeepLevel may fill seven
	// eighths of it, so that those at or above it find room. A record
	// larger than a shard's share is taken only while the shard holds no
	// bytes, and then alone: until it is written the shard sheds every
	// other record longer than a slot (those that fit their slot take no
	// bytes and still go in). The record buffers queued come on top:
	// RingCapacity × Shards × 416 bytes at most (6.5 MiB by default). Default DefaultMaxQueuedBytes (64 MiB); negative: no bound
	// but the slots.
	//
	// It costs every push a call that reads the record's size, and a
	// record longer than a slot one atomic add on its shard's byte
	// counter; the drain worker gives the bytes back with one add per
	// batch. A record shed
	// for bytes has been formatted first (its size is known only then).
	// docs/benchmarks.md ("Logging") has the cost against no bound.
	MaxQueuedBytes int
	// SpillDir and SpillBytes put a spill tier on disk behind the rings
	// (logsink.Options.SpillDir): while a Write to the destination
	// stalls, records go to files in SpillDir instead of being shed, up
	// to SpillBytes (default logsink.DefaultSpillBytes, 1 GiB), and are
	// written later in order. Default off.
	SpillDir   string
	SpillBytes int64
	// DisableHandOff turns logsink's hand-off off
	// (logsink.Options.DisableHandOff): a record whose ring is full is
	// shed at once, even when the drain worker is only short of CPU. By
	// default such a call waits for the worker, within the bounds of
	// logsink's guarantee 1.
	DisableHandOff bool

	// OnError, when set, is called with every error of a Write to the
	// writer and of the Format handler, one call at a time, outside every
	// lock of slogsink's: on the goroutine that met the error (a drain
	// worker, or the one that logs), or, when a call is in progress, on
	// the goroutine making it, after it; nobody waits for a call of
	// another. While one call lasts, up to 64 errors wait, and one error
	// counts the rest. It must not log through this handler. A panic in
	// it is recovered and counted in Panics.
	OnError func(error)
	// Logger receives the handler's own reports: the first recovered
	// panic of each minute, with its stack. Default: a text logger on
	// os.Stderr, not slog.Default(), which may well be this handler.
	Logger *slog.Logger
}

// settings is Options after defaults and validation.
type settings struct {
	hopts  slog.HandlerOptions
	format func(io.Writer, *slog.HandlerOptions) slog.Handler
	direct bool            // format is JSON or Text: see formatWriter
	sink   logsink.Options // the record writer's options
}

// settle validates o and applies the defaults. Every invalid field is
// reported, each in an error that wraps ErrInvalidOptions.
func (o *Options) settle(w io.Writer) (settings, error) {
	if o == nil {
		o = &Options{}
	}
	errs := fielderr.New(ErrInvalidOptions)
	bad := errs.Add
	if w == nil {
		bad("w", "nil", "New needs a writer")
	}
	if o.Shards < 0 {
		bad("Shards", o.Shards, "must be positive, or zero for the default 2")
	} else if o.Shards > sink.MaxShards {
		bad("Shards", o.Shards, fmt.Sprintf("must be at most sink.MaxShards (%d)", sink.MaxShards))
	}
	if o.RingCapacity < 0 {
		bad("RingCapacity", o.RingCapacity, "must be positive, or zero for the default 8192")
	} else if o.RingCapacity > sink.MaxRingCapacity {
		bad("RingCapacity", o.RingCapacity, fmt.Sprintf("must be at most sink.MaxRingCapacity (%d)", sink.MaxRingCapacity))
	}
	if o.BatchSize < 0 {
		bad("BatchSize", o.BatchSize, "must be positive, or zero for the default 1024")
	}
	if err := errs.Err(); err != nil {
		return settings{}, err
	}
	s := settings{
		hopts:  slog.HandlerOptions{Level: o.Level, AddSource: o.AddSource, ReplaceAttr: o.ReplaceAttr},
		format: o.Format,
		sink: logsink.Options{
			Shards:         o.Shards,
			RingCapacity:   o.RingCapacity,
			BatchSize:      o.BatchSize,
			MaxDelay:       o.MaxDelay,
			KeepLevel:      o.KeepLevel,
			KeepWait:       o.KeepWait,
			MaxQueuedBytes: o.MaxQueuedBytes,
			SpillDir:       o.SpillDir,
			SpillBytes:     o.SpillBytes,
			DisableHandOff: o.DisableHandOff,
			OnError:        o.OnError,
			Logger:         o.Logger,
			Name:           "slogsink",
		},
	}
	if s.hopts.Level == nil {
		s.hopts.Level = slog.LevelInfo
	}
	if s.format == nil {
		s.format = JSON
	}
	// A func value compares only with nil; its code pointer says whether
	// it is one of ours.
	fp := reflect.ValueOf(s.format).Pointer()
	s.direct = fp == reflect.ValueOf(JSON).Pointer() || fp == reflect.ValueOf(Text).Pointer()
	return s, nil
}

// newFormat calls Format for w and checks what it returns: nil, or a
// panic, is an error wrapping ErrInvalidOptions that names Format.
func (s *settings) newFormat(w io.Writer) (h slog.Handler, err error) {
	defer func() {
		if p := recover(); p != nil {
			h, err = nil, fmt.Errorf("%w: Format panicked: %v", ErrInvalidOptions, p)
		}
	}()
	h = s.format(w, &s.hopts)
	if h == nil {
		return nil, fmt.Errorf("%w: Format = %T: returned a nil handler", ErrInvalidOptions, s.format)
	}
	return h, nil
}

// JSON formats records as slog.NewJSONHandler does: the default
// [Options.Format].
func JSON(w io.Writer, opts *slog.HandlerOptions) slog.Handler {
	return slog.NewJSONHandler(w, opts)
}

// Text formats records as slog.NewTextHandler does, for [Options.Format].
func Text(w io.Writer, opts *slog.HandlerOptions) slog.Handler {
	return slog.NewTextHandler(w, opts)
}
