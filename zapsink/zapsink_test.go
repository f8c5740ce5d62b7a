package zapsink_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/logsink/logsinktest"
	"github.com/shardedsink/shardedsink/zapsink"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// encoder is zap's production JSON encoder without the time, so that two
// runs write the same bytes.
func encoder() zapcore.Encoder {
	cfg := zap.NewProductionEncoderConfig()
	cfg.TimeKey = ""
	return zapcore.NewJSONEncoder(cfg)
}

// zapLevel maps the contract's slog levels onto zap's.
func zapLevel(l slog.Level) zapcore.Level {
	switch {
	case l < slog.LevelInfo:
		return zapcore.DebugLevel
	case l < slog.LevelWarn:
		return zapcore.InfoLevel
	case l < slog.LevelError:
		return zapcore.WarnLevel
	default:
		return zapcore.ErrorLevel
	}
}

func options(o logsink.Options) *zapsink.Options {
	zo := &zapsink.Options{Buffering: o.Buffering}
	if o.KeepLevel != nil {
		zo.KeepLevel = zapLevel(o.KeepLevel.Level())
	}
	return zo
}

// logAt logs record i through a Logger with a field of its own (With).
func logAt(lg *zap.Logger) func(slog.Level, int) {
	return func(l slog.Level, i int) {
		lg.Log(zapLevel(l), "request served", zap.Int("i", i), zap.String("route", "/cart"))
	}
}

func syncLogger(t *testing.T, dst io.Writer) func(slog.Level, int) {
	return logAt(zap.New(zapcore.NewCore(encoder(), zapcore.AddSync(dst), zapcore.DebugLevel)).With(zap.String("svc", "cart")))
}

func TestCoreContract(t *testing.T) {
	logsinktest.Run(t, logsinktest.Front{
		New: func(t *testing.T, dst io.Writer, o logsink.Options) logsinktest.Subject {
			core, err := zapsink.NewCore(encoder(), dst, zapcore.DebugLevel, options(o))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = core.Close(context.Background()); <-core.Done() })
			return logsinktest.Subject{
				Log:   logAt(zap.New(core).With(zap.String("svc", "cart"))),
				Close: core.Close, Stats: core.Stats, Done: core.Done,
			}
		},
		Sync:   syncLogger,
		Report: logsinktest.JSONReport(zapsink.DroppedMessage),
	})
}

func TestWriteSyncerContract(t *testing.T) {
	logsinktest.Run(t, logsinktest.Front{
		New: func(t *testing.T, dst io.Writer, o logsink.Options) logsinktest.Subject {
			zo := options(o)
			ws, err := zapsink.NewWriteSyncer(dst, zo)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = ws.Close(context.Background()); <-ws.Done() })
			lg := zap.New(zapcore.NewCore(encoder(), ws, zapcore.DebugLevel)).With(zap.String("svc", "cart"))
			log := logAt(lg)
			return logsinktest.Subject{Log: log, Close: ws.Close, Stats: ws.Stats, Done: ws.Done}
		},
		Sync:   syncLogger,
		Report: logsinktest.JSONReport(logsink.DroppedMessage),
	})
}
