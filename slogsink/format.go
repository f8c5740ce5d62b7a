package slogsink

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/shardedsink/shardedsink/logsink/frontend"
)

// formatWriter is the writer of every Format handler of one New: the root's,
// the drop reports', and every one derived from it with WithAttrs and
// WithGroup, which share their parent's writer (slog's handlers keep the
// writer when they derive). So its Write does not know by itself whose
// record the bytes are; the two modes tell it.
//
// Direct mode, for [JSON] and [Text]: slog's handlers make exactly one Write
// per Handle, on the goroutine that calls Handle, and return what Write
// returns. Write copies the bytes into a pooled frontend.Record and returns
// it as its error (a formatted), which Handle returns to the caller that
// called it: the bytes find their record with no lock of slogsink's (slog
// holds its own mutex for the Write, a copy of the bytes, one of
// formatLanes: see core.lanes).
//
// Locked mode, for any other Format handler, which may write a record in
// several Writes or none: mu is held across each Handle, and Write appends
// to cur, the Record of that Handle.
type formatWriter struct {
	direct bool
	mu     sync.Mutex
	cur    *frontend.Record // under mu, in locked mode
}

func (w *formatWriter) Write(p []byte) (int, error) {
	if w.direct {
		r := frontend.GetRecord()
		_, _ = r.Write(p)
		return len(p), formatted{r}
	}
	_, _ = w.cur.Write(p)
	return len(p), nil
}

// formatted makes a Record an error, for Write to hand it back through
// Handle in direct mode; it never reaches the user. It holds one pointer,
// so making an error of it allocates nothing.
type formatted struct{ r *frontend.Record }

func (formatted) Error() string { return "slogsink: a formatted record on its way to the caller" }

// errRecovered is what format returns for a Format handler that panicked
// or called runtime.Goexit: the panic is counted and reported.
var errRecovered = errors.New("slogsink: the Format handler panicked (recovered and counted)")

// format runs f, a Format handler of c, on r and returns the bytes it
// wrote in a pooled Record, for the caller to push or put back; nil and a
// nil error when it wrote none; nil and its error when it returned one;
// nil and errRecovered when it panicked or called runtime.Goexit: counted
// here in Panics, and in Errors for a record (record true), before a
// Goexit goes on. what names the call in the report.
func (c *core) format(ctx context.Context, f slog.Handler, r slog.Record, record bool, what string) (out *frontend.Record, err error) {
	w := &c.fw
	var b *frontend.Record
	returned := false
	defer func() {
		if !w.direct {
			w.cur = nil
			w.mu.Unlock()
		}
		if returned {
			return
		}
		// A panic, or a Goexit (recover returns nil): the record is lost,
		// counted.
		p := recover()
		if b != nil {
			frontend.PutRecord(b)
		}
		if record {
			c.w.Fail(1, nil)
		}
		c.w.Panicked(what, p)
		out, err = nil, errRecovered
	}()
	if w.direct {
		err = f.Handle(ctx, r)
		returned = true
		if e, ok := err.(formatted); ok {
			return e.r, nil
		}
		return nil, err // not reached with slog's handlers, which always Write
	}
	b = frontend.GetRecord()
	w.mu.Lock()
	w.cur = b
	err = f.Handle(ctx, r)
	returned = true
	if err != nil || b.Len() == 0 {
		frontend.PutRecord(b)
		return nil, err
	}
	return b, nil
}
