package slogsink_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// withFormats are the Format options the With tests run under: slogsink's
// own JSON and Text, which format without a lock, and a Format of the
// user's, which formats under the New-wide lock.
var withFormats = map[string]func(io.Writer, *slog.HandlerOptions) slog.Handler{
	"JSON": slogsink.JSON,
	"Text": slogsink.Text,
	"users-json": func(w io.Writer, o *slog.HandlerOptions) slog.Handler {
		return slog.NewJSONHandler(w, o)
	},
}

type person struct{ Name string }

// logWithMutations builds a With chain over root whose values change after
// each With, and logs through every level of it, so that a handler that
// formats a level's attributes at any time but its own With writes other
// bytes than the synchronous handler.
func logWithMutations(t *testing.T, root slog.Handler) (valuerCalls int64) {
	t.Helper()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var pcs [1]uintptr
	runtime.Callers(1, pcs[:])
	handle := func(h slog.Handler, msg string) {
		r := slog.NewRecord(at, slog.LevelInfo, msg, pcs[0])
		r.AddAttrs(slog.Int("n", 1))
		at = at.Add(time.Millisecond)
		require.NoError(t, h.Handle(context.Background(), r))
	}
	lv := &counted{}
	lv.v.Store(1)
	m := map[string]int{"v": 1}
	u := &person{Name: "ann"}
	parent := root.WithAttrs([]slog.Attr{slog.Any("lv", lv), slog.Any("m", m), slog.Any("u", u)})
	lv.v.Store(3)
	m["v"] = 2
	u.Name = "bob"
	group := parent.WithGroup("g")
	child := group.WithAttrs([]slog.Attr{slog.Any("u2", u), slog.Group("sub", slog.Any("lv2", lv))})
	lv.v.Store(5)
	u.Name = "cy"
	grandchild := child.WithAttrs([]slog.Attr{slog.String("k", "v")})
	handle(grandchild, "grandchild")
	handle(child, "child")
	handle(group, "group")
	handle(parent, "parent")
	handle(group.WithGroup("empty"), "empty group")
	return lv.calls.Load()
}

func TestWithFormatsEachLevelOnceWhenItIsCalled(t *testing.T) {
	upper := func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) > 0 && a.Value.Kind() == slog.KindString {
			a.Value = slog.StringValue(strings.ToUpper(a.Value.String()))
		}
		return a
	}
	for name, format := range withFormats {
		for _, replace := range []func([]string, slog.Attr) slog.Attr{nil, upper} {
			t.Run(name+"/ReplaceAttr="+map[bool]string{true: "set", false: "nil"}[replace != nil], func(t *testing.T) {
				hopts := &slog.HandlerOptions{AddSource: true, ReplaceAttr: replace}
				var want bytes.Buffer
				wantCalls := logWithMutations(t, format(&want, hopts))

				var got writes
				h := newHandler(t, &got, &slogsink.Options{AddSource: true, ReplaceAttr: replace, Format: format, Buffering: logsink.Buffering{Shards: 1}})
				gotCalls := logWithMutations(t, h)
				require.NoError(t, h.Flush(context.Background()))
				require.Equal(t, splitLines(want.String()), got.lines(), "the synchronous handler's bytes")
				require.Equal(t, wantCalls, gotCalls, "LogValue calls: one per With that holds the valuer")
			})
		}
	}
}
