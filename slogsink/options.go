package slogsink

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
)

// The defaults that the zero value of each [Options] field stands for.
const (
	// DefaultShards is the default number of shards, each with one drain
	// worker that formats and writes. Two, not GOMAXPROCS: the package doc
	// has the table that chose it.
	DefaultShards = 2
	// DefaultRingCapacity is the default number of records each shard
	// buffers. A ring slot takes 312 bytes on 64-bit platforms (a
	// slog.Record and the handler it came through), and so does each slot
	// of the worker's batch, so a default shard takes 2.5 MiB, plus its
	// formatted batch and the attributes of records with more than five.
	DefaultRingCapacity = 4096
	// DefaultBatchSize is the default number of records formatted into one
	// buffer and written with one Write: a whole ring. A drain worker that
	// competes for the CPU with busy loggers gets a turn per batch, so the
	// larger the batch, the more it drains per turn (the package doc has
	// the measurement).
	DefaultBatchSize = 4096
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
	// The PC is taken by the Logger on the caller's goroutine; the drain
	// workers turn it into a file and line.
	AddSource bool
	// ReplaceAttr, as in slog.HandlerOptions, rewrites attributes. It runs
	// on the drain workers, possibly on several at once.
	ReplaceAttr func(groups []string, a slog.Attr) slog.Attr

	// Format makes the handler that formats records into a batch buffer:
	// [JSON] (the default), [Text], or any other. It is called once per
	// shard with a buffer as w and Level, AddSource and ReplaceAttr as
	// opts; the handler it returns must write every record it handles to w
	// before Handle returns and must not keep w for anything else. Records are handed to it with the ctx of the sink's Drain call,
	// not the caller's ctx.
	Format func(w io.Writer, opts *slog.HandlerOptions) slog.Handler

	// Shards is the number of rings, each with one drain worker. Default
	// DefaultShards (2).
	Shards int
	// RingCapacity is the number of records each ring holds; a record that
	// finds its ring full is dropped and counted. Default
	// DefaultRingCapacity (4096).
	RingCapacity int
	// BatchSize is the most records formatted and written at once. Default
	// DefaultBatchSize (4096), clamped to RingCapacity.
	BatchSize int

	// OnError, when set, is called with every error of a Write to the
	// writer and of the Format handler's Handle. It is called on a drain
	// worker, from one worker at a time, and must not log through this
	// handler.
	OnError func(error)
	// Logger receives the sink's own reports (a panic in a format handler
	// or ReplaceAttr, recovered). Default: a text logger on os.Stderr, not
	// slog.Default(), which may well be this handler.
	Logger *slog.Logger
}

// settled is Options after defaults and validation.
type settled struct {
	hopts        slog.HandlerOptions
	format       func(io.Writer, *slog.HandlerOptions) slog.Handler
	shards       int
	ringCapacity int
	batchSize    int
	onError      func(error)
	logger       *slog.Logger
}

// settle validates o and applies the defaults. Every invalid field is
// reported, each in an error that wraps ErrInvalidOptions.
func (o *Options) settle(w io.Writer) (settled, error) {
	if o == nil {
		o = &Options{}
	}
	var errs []error
	bad := func(field string, value any, why string) {
		errs = append(errs, fmt.Errorf("%w: %s = %v: %s", ErrInvalidOptions, field, value, why))
	}
	if w == nil {
		bad("w", "nil", "New needs a writer")
	}
	if o.Shards < 0 {
		bad("Shards", o.Shards, "must be positive, or zero for the default 2")
	}
	if o.RingCapacity < 0 {
		bad("RingCapacity", o.RingCapacity, "must be positive, or zero for the default 4096")
	}
	if o.BatchSize < 0 {
		bad("BatchSize", o.BatchSize, "must be positive, or zero for the default 4096")
	}
	if len(errs) > 0 {
		return settled{}, errors.Join(errs...)
	}
	s := settled{
		hopts:        slog.HandlerOptions{Level: o.Level, AddSource: o.AddSource, ReplaceAttr: o.ReplaceAttr},
		format:       o.Format,
		shards:       o.Shards,
		ringCapacity: o.RingCapacity,
		batchSize:    o.BatchSize,
		onError:      o.OnError,
		logger:       o.Logger,
	}
	if s.hopts.Level == nil {
		s.hopts.Level = slog.LevelInfo
	}
	if s.format == nil {
		s.format = JSON
	}
	if s.shards == 0 {
		s.shards = DefaultShards
	}
	if s.ringCapacity == 0 {
		s.ringCapacity = DefaultRingCapacity
	}
	if s.batchSize == 0 {
		s.batchSize = DefaultBatchSize
	}
	s.batchSize = min(s.batchSize, s.ringCapacity)
	return s, nil
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
