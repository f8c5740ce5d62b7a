package slogsink_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/logsink/logsinktest"
	"github.com/shardedsink/shardedsink/slogsink"
)

// noTime drops slog's time attribute, so that the handler's bytes and the
// synchronous handler's compare.
func noTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// logAt logs record i through lg, a logger with an attribute of its own.
func logAt(lg *slog.Logger) func(slog.Level, int) {
	return func(l slog.Level, i int) {
		lg.Log(context.Background(), l, "request served", "i", i, "route", "/cart")
	}
}

// The Handler passes the contract of logsink's front-ends: slog's own
// JSONHandler is the byte-exact reference.
func TestHandlerContract(t *testing.T) {
	logsinktest.Run(t, logsinktest.Front{
		New: func(t *testing.T, dst io.Writer, o logsink.Options) logsinktest.Subject {
			h, err := slogsink.New(dst, &slogsink.Options{
				Level:       slog.LevelDebug,
				ReplaceAttr: noTime,
				Buffering:   o.Buffering,
				KeepLevel:   o.KeepLevel,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = h.Close(context.Background()); <-h.Done() })
			return logsinktest.Subject{
				Log:   logAt(slog.New(h).With("svc", "cart")),
				Close: h.Close,
				Stats: func() logsink.Stats { return logsink.Stats(h.Stats()) },
				Done:  h.Done,
			}
		},
		Sync: func(t *testing.T, dst io.Writer) func(slog.Level, int) {
			return logAt(slog.New(slog.NewJSONHandler(dst, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: noTime})).With("svc", "cart"))
		},
		Report: logsinktest.JSONReport(slogsink.DroppedMessage),
	})
}
