package zerologsink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/rs/zerolog"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/logsink/frontend"
)

// DefaultCloseTimeout is the default [Options.CloseTimeout].
const DefaultCloseTimeout = 5 * time.Second

// DroppedMessage is the message of the event that reports, in the log
// stream, how many events were shed just before it: at warn level, with
// the fields "dropped" (a uint64) and "dropped_by_level", an object with
// the count of each level that lost events ("debug", "info", "warn",
// "error"; trace counts as debug, fatal and panic as error), and a
// timestamp.
const DroppedMessage = "zerologsink: dropped records"

// ErrInvalidOptions is wrapped by every error that [New] returns for bad
// options; each names the field and the value it rejects.
var ErrInvalidOptions = errors.New("zerologsink: invalid options")

// Options configures a [Writer]. A nil *Options, and the zero value of
// every field, means the default.
type Options struct {
	// KeepLevel is the level from which events are shed last, as a slog
	// level: SlogLevel(zerolog.ErrorLevel), say. Default
	// SlogLevel(zerolog.WarnLevel).
	KeepLevel slog.Leveler
	// CloseTimeout bounds Close (io.Closer, which zerolog calls before it
	// exits on Fatal) and the write of a fatal or panic event. Default
	// DefaultCloseTimeout (5 s).
	CloseTimeout time.Duration

	// Buffering sizes the rings and their workers, bounds the bytes the
	// events take, says how long an event at or above KeepLevel waits for
	// room (KeepWait), and puts a spill tier behind the rings (SpillDir):
	// logsink.Buffering says what each field costs, and its defaults are
	// logsink's.
	logsink.Buffering
	// OnError gets every error of a Write to the destination, one call at
	// a time, outside every lock (logsink.Options).
	OnError func(error)
	// Logger receives the writer's reports of recovered panics. Default: a
	// text logger on os.Stderr.
	Logger *slog.Logger
}

// Writer is a zerolog.LevelWriter (and an io.Closer) on a logsink.Writer.
// It is safe for concurrent use; the Writers that [Writer.Stream] returns
// share its logsink.Writer.
type Writer struct {
	s       frontend.Stream
	timeout time.Duration
}

var (
	_ zerolog.LevelWriter = (*Writer)(nil)
	_ io.Closer           = (*Writer)(nil)
)

// New returns a Writer that writes zerolog's events to dst. It returns an
// error wrapping [ErrInvalidOptions] that names every bad option; nothing
// is started then. Otherwise the workers run until Close.
func New(dst io.Writer, opts *Options) (*Writer, error) {
	lo, timeout, err := opts.settle(dst)
	if err != nil {
		return nil, err
	}
	w, err := frontend.New(dst, &lo, report)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	return &Writer{s: w.Root(), timeout: timeout}, nil
}

// SlogLevel maps a zerolog level onto slog's, as the writer counts and
// keeps events: trace (and below) -8, debug -4, info 0, warn 4, error 8,
// fatal and panic 12; no level (and anything else) info.
func SlogLevel(l zerolog.Level) slog.Level {
	switch {
	case l <= zerolog.TraceLevel:
		return slog.LevelDebug - 4
	case l == zerolog.DebugLevel:
		return slog.LevelDebug
	case l == zerolog.InfoLevel:
		return slog.LevelInfo
	case l == zerolog.WarnLevel:
		return slog.LevelWarn
	case l == zerolog.ErrorLevel:
		return slog.LevelError
	case l == zerolog.FatalLevel, l == zerolog.PanicLevel:
		return slog.LevelError + 4
	default:
		return slog.LevelInfo
	}
}

// Write writes p, one event, at info level (zerolog calls WriteLevel
// instead); it returns len(p), nil.
func (w *Writer) Write(p []byte) (int, error) { return w.s.WriteLevel(slog.LevelInfo, p) }

// WriteLevel writes p, one event of level l, and returns len(p), nil. It
// never waits for the destination, but for an event at fatal or panic
// level, which it writes to the destination before it returns, within
// Options.CloseTimeout.
func (w *Writer) WriteLevel(l zerolog.Level, p []byte) (int, error) {
	n, err := w.s.WriteLevel(SlogLevel(l), p)
	if l == zerolog.FatalLevel || l == zerolog.PanicLevel {
		ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
		_ = w.s.Writer().Flush(ctx)
		cancel()
	}
	return n, err
}

// Stream returns a Writer on the next shard of the same logsink.Writer
// (round-robin), for a logger of its own: loggers on Writers of their own
// spread over the shards' workers; the events of one goroutine through one
// Writer keep their order.
func (w *Writer) Stream() *Writer { return &Writer{s: w.s.Writer().Stream(), timeout: w.timeout} }

// Flush waits until every event written before it is written to the
// destination, or ctx ends (logsink.Writer.Flush).
func (w *Writer) Flush(ctx context.Context) error { return w.s.Writer().Flush(ctx) }

// Close is CloseContext with a ctx of Options.CloseTimeout: zerolog calls
// it before it exits on Fatal, as it calls the diode's.
func (w *Writer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	defer cancel()
	return w.CloseContext(ctx)
}

// CloseContext writes what is buffered and stops the workers, for this
// Writer and every one Stream derived; events written after are dropped
// and counted. It returns nil, or ctx.Err() when ctx ends first
// (logsink.Writer.Close). It does not close the destination.
func (w *Writer) CloseContext(ctx context.Context) error { return w.s.Writer().Close(ctx) }

// Done is closed once Close has stopped the workers; from then on Stats is
// final.
func (w *Writer) Done() <-chan struct{} { return w.s.Writer().Done() }

// Stats returns the writer's counters (logsink.Stats).
func (w *Writer) Stats() logsink.Stats { return w.s.Writer().Stats() }

// report is the writer's drop report (frontend.Report), formatted by
// zerolog with its global field names. It is logged with Log (no level),
// which zerolog's global level does not filter out but when disabled,
// and given its warn level by hand: a report of lost events is written
// whatever level the program logs at.
func report(d frontend.Drops) *frontend.Record {
	r := frontend.GetRecord()
	by := zerolog.Dict()
	for i, n := range d.ByLevel {
		if n != 0 {
			by.Uint64(dropLevels[i].String(), n)
		}
	}
	lg := zerolog.New(r)
	ev := lg.Log().Str(zerolog.LevelFieldName, zerolog.LevelFieldMarshalFunc(zerolog.WarnLevel)).Uint64("dropped", d.Total).Dict("dropped_by_level", by)
	if d.WaitedOut != 0 {
		wo := zerolog.Dict()
		for i, n := range d.WaitedOutByLevel {
			if n != 0 {
				wo.Uint64(dropLevels[i].String(), n)
			}
		}
		ev = ev.Uint64("waited_out", d.WaitedOut).Dict("waited_out_by_level", wo)
	}
	ev.Timestamp().Msg(DroppedMessage)
	return r
}

// dropLevels are zerolog's levels of frontend.DropLevels.
var dropLevels = [...]zerolog.Level{zerolog.DebugLevel, zerolog.InfoLevel, zerolog.WarnLevel, zerolog.ErrorLevel}
