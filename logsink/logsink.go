package logsink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/shardedsink/shardedsink/logsink/internal/engine"
)

// DroppedMessage is the message of the drop report that a Writer writes in
// the stream where records were dropped (the package doc's guarantee 4):
// a JSON line at level WARN, whose "dropped" is their number and whose
// "dropped_by_level" holds the levels that lost records, named as slog
// names them. A front-end writes its own report, in its logger's format
// and with its own message.
const DroppedMessage = "logsink: dropped records"

// Writer is a non-blocking writer of formatted log records. See the
// package documentation for what it promises and what it costs.
//
// A Writer is safe for concurrent use. Its Streams share its sink,
// destination and counters.
type Writer struct {
	e *engine.Writer
	// owned lets package logsink/frontend reach e (engine.Of); it has
	// nothing a user can reach.
	owned
}

type owned = engine.Owned

// New returns a Writer that writes to w. Its drain workers copy the bytes
// of a batch of records into one Write of at most 256 KiB (a longer record
// is written alone). Writes never overlap, so w need not be safe for
// concurrent use.
//
// New returns an error wrapping [ErrInvalidOptions] that names the field
// and the value of every invalid option (a nil w, a negative size other
// than MaxQueuedBytes and MaxDelay, a size beyond the sink's limits);
// nothing is started then. Otherwise the drain workers run until
// [Writer.Close].
func New(w io.Writer, opts *Options) (*Writer, error) {
	s, err := opts.settle(w)
	if err != nil {
		return nil, err
	}
	e, err := engine.New(w, s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	return &Writer{e: e, owned: engine.Own(e)}, nil
}

// Write writes p as one record at Options.Level, through the Writer's own
// Stream (shard 0): see [Stream.WriteLevel], which says when it waits
// (never for a slow destination). It always returns len(p), nil: a record
// that is not accepted is counted (see [Writer.Stats]) and reported in
// the stream.
func (w *Writer) Write(p []byte) (int, error) { return w.e.Write(p) }

// WriteLevel writes p as one record of level l, through the Writer's own
// Stream (shard 0): see [Stream.WriteLevel].
func (w *Writer) WriteLevel(l slog.Level, p []byte) (int, error) { return w.e.WriteLevel(l, p) }

// Stream returns a Stream of its own for a logger: one shard, the next
// one round-robin, whose records are written in the order they were
// accepted. Loggers that log through Streams of their own spread over the
// shards and their workers; the records of one goroutine through one
// Stream keep their order.
func (w *Writer) Stream() Stream { return Stream{w: w, s: w.e.Stream()} }

// Shards returns the number of shards.
func (w *Writer) Shards() int { return w.e.Shards() }

// Flush waits until every record accepted before the call has been written
// to the destination (or counted as failed). First it pushes a drop report
// for the records dropped so far that no later record has reported yet,
// where the ring has room for it (otherwise the next record reports them).
// It returns nil, ctx.Err() when ctx ends first, and [ErrClosed] once the
// writer is closed. Loggers may keep logging meanwhile.
func (w *Writer) Flush(ctx context.Context) error {
	err := w.e.Flush(ctx)
	if errors.Is(err, engine.ErrClosed) {
		return ErrClosed
	}
	return err
}

// Close stops the Writer: records written from now on are dropped and
// counted; the records accepted before are written to the destination,
// followed by a drop report for any drops not yet reported; then the drain
// workers stop. It returns nil, or ctx.Err() when ctx ends first: the
// records still buffered then are not written, and are counted in
// Stats().Abandoned once the workers have exited ([Writer.Done]).
//
// Close runs once; every call returns the first call's result, and a call
// made while the first is still working returns when it does, or with its
// own ctx.Err(). Close does not close the destination. A panic in the
// destination or the drop report's formatting while Close writes the last
// drop report is recovered and counted, as on the drain workers.
func (w *Writer) Close(ctx context.Context) error { return w.e.Close(ctx) }

// Done returns a channel that is closed once Close has stopped the drain
// workers and the last of them has exited; after a Close whose ctx ended
// first, that is when the last Write in flight has returned. From then on
// the counts of [Writer.Stats] are final.
func (w *Writer) Done() <-chan struct{} { return w.e.Done() }

// Dropped returns Stats().Dropped, without allocating.
func (w *Writer) Dropped() uint64 { return w.e.Dropped() }

// Written returns Stats().Written: the records written by Writes that
// succeeded; drop reports are not counted.
func (w *Writer) Written() uint64 { return w.e.Written() }

// Errors returns Stats().Errors: the records lost to an error or a panic.
func (w *Writer) Errors() uint64 { return w.e.Errors() }

// Stream is one way into a [Writer]: every record written through it goes
// through one shard, and one worker writes that shard's records in the
// order they were accepted. So the records one goroutine writes through
// one Stream are written in the order it wrote them; through different
// Streams they may be written out of order. A Stream is a small value,
// safe for concurrent use; its copies are the same Stream. The zero
// Stream is not usable: take one from [Writer.Stream].
type Stream struct {
	w *Writer
	s engine.Stream
}

// Writer returns the Writer that s writes into.
func (s Stream) Writer() *Writer { return s.w }

// Write writes p as one record at Options.Level; see [Stream.WriteLevel].
func (s Stream) Write(p []byte) (int, error) { return s.s.Write(p) }

// WriteLevel writes p, the formatted bytes of one record, as a record of
// level l: it copies p (into a pooled record buffer, in place for up to
// 352 bytes; a longer record allocates its bytes once) and returns len(p),
// nil. It does not keep p, and waits only as guarantee 1 of the package
// says: for a drain worker short of CPU, or, at or above KeepLevel, for
// room up to Options.KeepWait; never for a slow destination.
//
// A record is dropped and counted instead (see [Writer.Stats]) when the
// shard's ring is full; below KeepLevel already when the ring is full but
// for the reserve that only records at or above KeepLevel may use. A
// record at or above KeepLevel that finds the ring full (or the shard's
// share of MaxQueuedBytes spent) first waits up to Options.KeepWait for
// room, and is counted in Stats.WaitedOut too when none comes. A record
// longer than a slot is dropped when the bytes the shard holds would pass
// its share of Options.MaxQueuedBytes (below KeepLevel, seven eighths of
// it; counted in Stats.DroppedForBytes too). The next record the shard
// accepts carries, in front of it in its own ring slot, the drop report
// that says how many were dropped, and at which levels. After
// [Writer.Close] every record is dropped and counted. An empty p is
// counted in Stats.Empty whatever the ring's state, after Close too:
// never in Dropped nor in a drop report.
//
// It returns nil and len(p) in every case, so that a logger that reports
// a failed Write (as zerolog does, on stderr) does not report drops that
// the stream reports itself.
func (s Stream) WriteLevel(l slog.Level, p []byte) (int, error) { return s.s.WriteLevel(l, p) }
