package zapsink

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"go.uber.org/zap/zapcore"

	"github.com/shardedsink/shardedsink/internal/fielderr"
	"github.com/shardedsink/shardedsink/logsink"
)

// DefaultSyncTimeout is the default [Options.SyncTimeout].
const DefaultSyncTimeout = time.Second

// ErrInvalidOptions is wrapped by every error that [NewCore] and
// [NewWriteSyncer] return for bad arguments; each names the field and the
// value it rejects.
var ErrInvalidOptions = errors.New("zapsink: invalid options")

// Options configures a [Core] or a [WriteSyncer]. A nil *Options, and the
// zero value of every field, means the default.
type Options struct {
	// KeepLevel: the records of the levels it enables are shed last (the
	// reserve of logsink.Options.KeepLevel), read once, by New, as the
	// lowest of zap's levels it enables. Default zapcore.WarnLevel. A
	// WriteSyncer reads its records' levels with LevelOf.
	KeepLevel zapcore.LevelEnabler
	// LevelOf reads the level of a record from its bytes, for a
	// WriteSyncer, which gets none. Default JSONLevel. The Core ignores it.
	LevelOf func([]byte) zapcore.Level
	// SyncTimeout bounds Sync, which the Core calls after every entry
	// above ErrorLevel. Default DefaultSyncTimeout (1 s).
	SyncTimeout time.Duration

	// Buffering sizes the rings and their workers, bounds the bytes the
	// records take, says how long a record at or above KeepLevel waits for
	// room (KeepWait), and puts a spill tier behind the rings (SpillDir):
	// logsink.Buffering says what each field costs, and its defaults are
	// logsink's.
	logsink.Buffering
	// OnError gets every error of a Write to the destination and of the
	// encoder, one call at a time, outside every lock (logsink.Options).
	OnError func(error)
	// Logger receives the writer's reports of recovered panics. Default: a
	// text logger on os.Stderr.
	Logger *slog.Logger
}

// settle validates o and dst and returns logsink's options
// and the sync timeout. The error names every bad field, and dst, in
// zapsink's terms.
func (o *Options) settle(dst io.Writer) (logsink.Options, time.Duration, error) {
	if o == nil {
		o = &Options{}
	}
	lo := logsink.Options{KeepLevel: keepLevel(o.KeepLevel), Buffering: o.Buffering, OnError: o.OnError, Logger: o.Logger, Name: "zapsink"}
	errs := fielderr.New(ErrInvalidOptions)
	timeout := o.SyncTimeout
	if timeout < 0 {
		errs.Add("SyncTimeout", timeout, fmt.Sprintf("must be positive, or zero for the default %v", DefaultSyncTimeout))
	}
	if timeout <= 0 {
		timeout = DefaultSyncTimeout
	}
	// The fields passed on to logsink keep their names there (w is dst):
	// what logsink refuses is named in zapsink's terms.
	errs.Adopt(lo.Check(dst), map[string]string{"w": "dst"})
	return lo, timeout, errs.Err()
}

// keepLevel is Options.KeepLevel as a slog level: that of the lowest zap
// level that e enables (above FatalLevel when it enables none), or of
// WarnLevel when e is nil.
func keepLevel(e zapcore.LevelEnabler) slog.Level {
	if e == nil {
		return SlogLevel(zapcore.WarnLevel)
	}
	for l := zapcore.DebugLevel; l <= zapcore.FatalLevel; l++ {
		if e.Enabled(l) {
			return SlogLevel(l)
		}
	}
	return SlogLevel(zapcore.FatalLevel) + 1
}

// SlogLevel maps a zap level onto slog's, as the writer counts and keeps
// records: Debug -4, Info 0, Warn 4, Error 8, DPanic 9, Panic 10, Fatal
// 11 (the levels above Error count as ERROR in the drop reports).
func SlogLevel(l zapcore.Level) slog.Level {
	if l <= zapcore.ErrorLevel {
		return slog.Level(4 * int(l))
	}
	return slog.LevelError + slog.Level(l-zapcore.ErrorLevel)
}
