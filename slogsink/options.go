package slogsink

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"

	"github.com/shardedsink/shardedsink/internal/fielderr"
	"github.com/shardedsink/shardedsink/logsink"
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

	// KeepLevel is the level from which records are shed last: an eighth
	// of each ring is a reserve that only records at or above it may fill
	// (logsink.Options.KeepLevel). Default slog.LevelWarn
	// (logsink.DefaultKeepLevel); read once, by New.
	KeepLevel slog.Leveler
	// Buffering sizes the rings and their workers, bounds the bytes the
	// records take, says how long a record at or above KeepLevel waits for
	// room (KeepWait), and puts a spill tier behind the rings (SpillDir):
	// logsink.Buffering says what each field costs, and its defaults are
	// logsink's.
	logsink.Buffering

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
	s := settings{
		hopts:  slog.HandlerOptions{Level: o.Level, AddSource: o.AddSource, ReplaceAttr: o.ReplaceAttr},
		format: o.Format,
		sink: logsink.Options{
			KeepLevel: o.KeepLevel,
			Buffering: o.Buffering,
			OnError:   o.OnError,
			Logger:    o.Logger,
			Name:      "slogsink",
		},
	}
	// The fields passed on to logsink keep their names there: what logsink
	// refuses is named in slogsink's terms already.
	errs := fielderr.New(ErrInvalidOptions)
	errs.Adopt(s.sink.Check(w), nil)
	if err := errs.Err(); err != nil {
		return settings{}, err
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
