package logsink_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/logsink/frontend"
	"github.com/shardedsink/shardedsink/logsink/logsinktest"
)

// line is the record the contract tests log through a plain Writer: what
// a logger that formats JSON by hand would write.
func line(l slog.Level, i int) []byte {
	return fmt.Appendf(nil, "{\"level\":%q,\"i\":%d}\n", l.String(), i)
}

// The Writer itself, used with WriteLevel, passes the contract that every
// front-end runs, with the default drop report.
func TestWriterContract(t *testing.T) {
	logsinktest.Run(t, logsinktest.Front{
		New: func(t *testing.T, dst io.Writer, o logsink.Options) logsinktest.Subject {
			w, err := logsink.New(dst, &o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = w.Close(context.Background()); <-w.Done() })
			return logsinktest.Subject{
				Log:   func(l slog.Level, i int) { _, _ = w.WriteLevel(l, line(l, i)) },
				Close: w.Close,
				Stats: w.Stats,
				Done:  w.Done,
			}
		},
		Sync: func(t *testing.T, dst io.Writer) func(slog.Level, int) {
			return func(l slog.Level, i int) { _, _ = dst.Write(line(l, i)) }
		},
		Report: logsinktest.JSONReport(logsink.DroppedMessage),
	})
}

// A Stream of its own per logger passes the contract too: its records go
// through another shard than the root's.
func TestStreamContract(t *testing.T) {
	logsinktest.Run(t, logsinktest.Front{
		New: func(t *testing.T, dst io.Writer, o logsink.Options) logsinktest.Subject {
			w, err := logsink.New(dst, &o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = w.Close(context.Background()); <-w.Done() })
			s := w.Stream()
			return logsinktest.Subject{
				Log:   func(l slog.Level, i int) { _, _ = s.WriteLevel(l, line(l, i)) },
				Close: w.Close,
				Stats: w.Stats,
				Done:  w.Done,
			}
		},
		Sync: func(t *testing.T, dst io.Writer) func(slog.Level, int) {
			return func(l slog.Level, i int) { _, _ = dst.Write(line(l, i)) }
		},
		Report: logsinktest.JSONReport(logsink.DroppedMessage),
	})
}

// The default report is valid JSON that names the levels as slog does.
func TestJSONReport(t *testing.T) {
	r := frontend.JSONReport(frontend.Drops{Total: 5, ByLevel: [4]uint64{1, 4, 0, 0}})
	defer frontend.PutRecord(r)
	n, ok := logsinktest.JSONReport(logsink.DroppedMessage)(r.Bytes()[:r.Len()-1])
	if !ok || n != 5 {
		t.Fatalf("JSONReport wrote %q: recognised %v, dropped %d", r.Bytes(), ok, n)
	}
	for _, want := range []string{`"DEBUG":1`, `"INFO":4`, `"level":"WARN"`} {
		if !contains(r.Bytes(), want) {
			t.Errorf("JSONReport wrote %q, without %s", r.Bytes(), want)
		}
	}
	if contains(r.Bytes(), `"WARN":`) {
		t.Errorf("JSONReport wrote %q: a level that lost nothing has a count", r.Bytes())
	}
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }
