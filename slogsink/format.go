package slogsink

import (
	"context"
	"errors"
	"log/slog"
	"sync"
)

// formatWriter is the writer of every Format handler of one New: the root's,
// the drop reports', and every one derived from it with WithAttrs and
// WithGroup, which share their parent's writer (slog's handlers keep the
// writer when they derive). So its Write does not know by itself whose
// record the bytes are; the two modes tell it.
//
// Direct mode, for [JSON] and [Text]: slog's handlers make exactly one Write
// per Handle, on the goroutine that calls Handle, and return what Write
// returns. Write copies the bytes into a pooled entry and returns the
// entry as its error, which Handle returns to the caller that called it:
// the bytes find their record with no lock of slogsink's (slog holds its
// own mutex for the Write, a copy of the bytes).
//
// Locked mode, for any other Format handler, which may write a record in
// several Writes or none: mu is held across each Handle, and Write appends
// to cur, the entry of that Handle.
type formatWriter struct {
	direct bool
	mu     sync.Mutex
	cur    *entry // under mu, in locked mode
}

func (w *formatWriter) Write(p []byte) (int, error) {
	if w.direct {
		e := getEntry()
		e.append(p)
		return len(p), e
	}
	w.cur.append(p)
	return len(p), nil
}

// Error makes an entry an error, for Write to hand it back through Handle
// in direct mode; it never reaches the user.
func (*entry) Error() string { return "slogsink: a formatted record on its way to the caller" }

// entryPool recycles the entries that records are formatted into on the
// caller and pushed from (the push copies the entry into its ring slot).
// A caller takes one and puts it back within the same call, on the same P
// as a rule, as slog's own handlers do with their buffers.
var entryPool = sync.Pool{New: func() any { return new(entry) }}

func getEntry() *entry { return entryPool.Get().(*entry) }

// putEntry puts e back, empty; its big bytes, if any, belong to the ring
// slot it was pushed into, or to nobody.
func putEntry(e *entry) {
	e.big, e.n, e.marker = nil, 0, false
	entryPool.Put(e)
}

// errRecovered is what format returns for a Format handler that panicked
// or called runtime.Goexit: the panic is counted and reported.
var errRecovered = errors.New("slogsink: the Format handler panicked (recovered and counted)")

// format runs f, a Format handler of c, on r and returns the bytes it
// wrote in a pooled entry for the caller to put back; nil and a nil error
// when it wrote none; nil and its error when it returned one; nil and
// errRecovered when it panicked or called runtime.Goexit: counted here in
// Panics, and in Errors for a record (record true), before a Goexit goes
// on. what names the call in the report.
func (c *core) format(ctx context.Context, f slog.Handler, r slog.Record, record bool, what string) (out *entry, err error) {
	w := &c.fw
	var b *entry
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
			putEntry(b)
		}
		if record {
			c.failed.Add(1)
		}
		c.reportPanic(what, p)
		out, err = nil, errRecovered
	}()
	if w.direct {
		err = f.Handle(ctx, r)
		returned = true
		if e, ok := err.(*entry); ok {
			return e, nil
		}
		return nil, err // not reached with slog's handlers, which always Write
	}
	b = getEntry()
	w.mu.Lock()
	w.cur = b
	err = f.Handle(ctx, r)
	returned = true
	if err != nil || b.len() == 0 {
		putEntry(b)
		return nil, err
	}
	return b, nil
}
