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
// returns. Write copies the bytes into a pooled buffer and returns the
// buffer as its error, which Handle returns to the caller that called it:
// the bytes find their record with no lock of slogsink's (slog holds its
// own mutex for the Write, a copy of the bytes).
//
// Locked mode, for any other Format handler, which may write a record in
// several Writes or none: mu is held across each Handle, and Write appends
// to cur, the buffer of that Handle.
type formatWriter struct {
	direct bool
	mu     sync.Mutex
	cur    *buffer // under mu, in locked mode
}

func (w *formatWriter) Write(p []byte) (int, error) {
	if w.direct {
		b := getBuffer()
		b.b = append(b.b, p...)
		return len(p), b
	}
	w.cur.b = append(w.cur.b, p...)
	return len(p), nil
}

// buffer is the scratch space that one record is formatted into, on the
// caller; its bytes are then copied into the entry that travels. In direct
// mode it travels from Write back to the caller as Handle's error, which
// is what its Error method is for; it never reaches the user.
type buffer struct{ b []byte }

func (*buffer) Error() string { return "slogsink: a formatted record on its way to the caller" }

// bufPool recycles the scratch buffers. A caller takes one and puts it
// back within the same call, on the same P as a rule, as slog's own
// handlers do with theirs.
var bufPool = sync.Pool{New: func() any { return &buffer{b: make([]byte, 0, 512)} }}

// maxPooledBuffer is the largest buffer put back into bufPool: a record of
// a megabyte should not pin a megabyte per pooled buffer.
const maxPooledBuffer = 64 << 10

func getBuffer() *buffer { return bufPool.Get().(*buffer) }

func putBuffer(b *buffer) {
	if cap(b.b) > maxPooledBuffer {
		return
	}
	b.b = b.b[:0]
	bufPool.Put(b)
}

// errRecovered is what format returns for a Format handler that panicked
// or called runtime.Goexit: the panic is counted and reported.
var errRecovered = errors.New("slogsink: the Format handler panicked (recovered and counted)")

// format runs f, a Format handler of c, on r and returns the bytes it
// wrote in a pooled buffer for the caller to put back; nil and a nil error
// when it wrote none; nil and its error when it returned one; nil and
// errRecovered when it panicked or called runtime.Goexit: counted here in
// Panics, and in Errors for a record (record true), before a Goexit goes
// on. what names the call in the report.
func (c *core) format(ctx context.Context, f slog.Handler, r slog.Record, record bool, what string) (out *buffer, err error) {
	w := &c.fw
	var b *buffer
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
			putBuffer(b)
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
		if d, ok := err.(*buffer); ok {
			return d, nil
		}
		return nil, err // not reached with slog's handlers, which always Write
	}
	b = getBuffer()
	w.mu.Lock()
	w.cur = b
	err = f.Handle(ctx, r)
	returned = true
	if err != nil || len(b.b) == 0 {
		putBuffer(b)
		return nil, err
	}
	return b, nil
}
