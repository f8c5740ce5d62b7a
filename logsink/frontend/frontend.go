package frontend

import (
	"io"
	"log/slog"
	"time"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/logsink/internal/engine"
)

// Writer is a [logsink.Writer] with the hooks of the front-end that made
// it. Its Flush, Close, Done and Stats are the logsink.Writer's, and so
// is the promise of every record it takes: logsink's package doc.
type Writer struct {
	*logsink.Writer
	e *engine.Writer
}

// New returns a Writer that writes to dst as logsink.New(dst, opts) does,
// whose drop reports report formats (nil: [JSONReport]). Set opts.Name to
// the front-end's name: it prefixes the Writer's own messages. New returns
// logsink.New's error, wrapping logsink.ErrInvalidOptions, for bad options;
// nothing is started then.
func New(dst io.Writer, opts *logsink.Options, report Report) (*Writer, error) {
	lw, err := logsink.New(dst, opts)
	if err != nil {
		return nil, err
	}
	w := &Writer{Writer: lw, e: engine.Of(lw)}
	if report != nil {
		// Before anyone logs: New has not returned the Writer yet, and no
		// drain worker formats a report.
		w.e.SetReport(func(d engine.Drops) *engine.Record { return (*engine.Record)(report(Drops(d))) })
	}
	return w, nil
}

// Root returns the Writer's own Stream, shard 0: the one that its Write
// uses, and the one a front-end's first logger should use.
func (w *Writer) Root() Stream { return Stream{w: w, s: w.e.Root()} }

// Stream returns a Stream of its own for a logger, on the next shard,
// round-robin, as logsink.Writer.Stream does: what a front-end's derived
// loggers (slog's With, zap's With) take.
func (w *Writer) Stream() Stream { return Stream{w: w, s: w.e.Stream()} }

// Fail counts n records lost to err, a failure of the front-end's
// formatting, in Stats.Errors (n may be 0: an error that cost no record,
// such as a drop report's), and hands err, when not nil, to
// Options.OnError.
func (w *Writer) Fail(n int, err error) { w.e.Fail(n, err) }

// CountEmpty counts one record for which the front-end's formatter wrote
// no bytes in Stats.Empty: there is nothing to write, and nothing to push.
func (w *Writer) CountEmpty() { w.e.CountEmpty() }

// Panicked counts a panic that the front-end recovered (p; nil for a
// runtime.Goexit) in Stats.Panics and logs it, with its stack, through
// Options.Logger unless another report went out less than a minute ago.
// where names what panicked ("the Format handler"). The records it cost
// are counted with [Writer.Fail].
func (w *Writer) Panicked(where string, p any) { w.e.Panicked(where, p) }

// MaxDrainTurn returns the longest drain turn so far (one batch's copies
// and Writes), the time a drain worker held a processor: for a
// front-end's benchmarks and monitoring.
func (w *Writer) MaxDrainTurn() time.Duration { return w.e.MaxDrainTurn() }

// Stream is one way into a [Writer], as a logsink.Stream is: one shard,
// whose records are written in the order they were accepted. A Stream is
// a small value, safe for concurrent use; its copies are the same Stream.
// The zero Stream is not usable: take one from [Writer.Root] or
// [Writer.Stream].
type Stream struct {
	w *Writer
	s engine.Stream
}

// A Call is one logging call that [Stream.Begin] started, from Begin to
// its [Stream.Push]: what its waits for the drain worker have taken so
// far, so that the call waits in all no longer than logsink's guarantee 1
// allows. Its zero value has waited nothing.
type Call struct{ c engine.Call }

// Begin starts a record of level l that the caller formats itself, for a
// front-end that formats on the caller (slogsink, zapsink): it reports
// whether s takes a record of that level now, and returns the [Call] to
// hand to Push. When it returns false the record is already dropped and
// counted (the ring is full for l, or the Writer is closed), and the
// caller formats nothing. A record at or above KeepLevel is refused only
// once the Writer is closed, or with KeepWait off: Push waits for room for
// it.
//
// When it returns true the caller formats the record and ends it with
// exactly one of [Stream.Push] (given Begin's Call), [Writer.Fail]
// (counting 1), [Writer.Panicked] (after counting the record with Fail) or
// [Writer.CountEmpty], and then calls [Stream.End], which must run even
// when the formatting panics or calls runtime.Goexit (defer it): Close
// waits for every record begun to end.
//
// Begin may yield the processor (runtime.Gosched) while the ring backs up,
// so that the drain worker gets a turn (logsink's guarantee 1).
func (s Stream) Begin(l slog.Level) (Call, bool) {
	c, ok := s.s.Begin(l)
	return Call{c}, ok
}

// End ends a record that Begin started.
func (s Stream) End() { s.s.End() }

// Push hands r, the formatted bytes of a record of level l that
// [Stream.Begin] started, to the shard, and takes r over (the caller must
// not use it after): the drain worker puts it back into the pool once the
// record is written, or Push at once when it is shed. The record is
// accepted, or dropped and counted, as logsink.Stream.WriteLevel says (at
// or above KeepLevel, after a wait of up to Options.KeepWait for room); a
// report of earlier drops goes in front of it. An empty r is counted in
// Stats.Empty.
func (s Stream) Push(c Call, l slog.Level, r *Record) { s.s.Push(c.c, l, (*engine.Record)(r)) }

// WriteLevel writes p, the formatted bytes of one record, as a record of
// level l, as logsink.Stream.WriteLevel does: for a logger that formats
// into bytes of its own (zerolog). It copies p, and returns len(p), nil.
func (s Stream) WriteLevel(l slog.Level, p []byte) (int, error) { return s.s.WriteLevel(l, p) }

// Writer returns the Writer that s writes into.
func (s Stream) Writer() *Writer { return s.w }
