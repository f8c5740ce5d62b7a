package frontend

import (
	"log/slog"

	"github.com/shardedsink/shardedsink/logsink/internal/engine"
)

// InlineSize is the longest formatted record that a [Record] holds in
// place; a longer one allocates its bytes once, bounded in all by
// Options.MaxQueuedBytes. A record of five attributes and a time, a level
// and a message takes about 150 bytes in JSON, 250 with the caller's file
// and line.
const InlineSize = 352

// InlineSize is the engine's: the two differ only if one is edited alone,
// and then this does not compile (a negative constant converted to uint).
const _ = uint(InlineSize-engine.InlineSize) + uint(engine.InlineSize-InlineSize)

// Record holds the formatted bytes of one record on their way through a
// [Writer]: the front-end formats into it, and the sink carries the
// pointer, so that a record's bytes are written once on the caller and
// read once by the drain worker, whatever its length (a ring slot holds
// the pointer and its sequence number, 16 bytes). It is an io.Writer that
// keeps up to [InlineSize] bytes in place and allocates only for a longer
// record. Take one with [GetRecord], write the record's bytes into it,
// and hand it to [Stream.Push], which takes it over (the drain worker
// puts it back into the pool once it is written); one that is not pushed
// goes back with [PutRecord]. A Record is used by one goroutine at a
// time.
type Record engine.Record

// GetRecord returns an empty Record from a pool.
func GetRecord() *Record { return (*Record)(engine.GetRecord()) }

// PutRecord puts r back into the pool, empty; r must not be used after.
func PutRecord(r *Record) { engine.PutRecord((*engine.Record)(r)) }

// Write appends p to the record's bytes; it always returns len(p), nil.
func (r *Record) Write(p []byte) (int, error) { return (*engine.Record)(r).Write(p) }

// Len returns the number of bytes written into r.
func (r *Record) Len() int { return (*engine.Record)(r).Len() }

// Bytes returns the bytes written into r; they are valid until r is
// pushed, put back or written to again.
func (r *Record) Bytes() []byte { return (*engine.Record)(r).Bytes() }

// Report formats the record that reports drops in the stream (logsink's
// guarantee 4), in the front-end's format: it returns a Record from
// [GetRecord] holding the report's bytes, which the Writer puts back, or
// nil when it could not (the front-end counts that failure itself, with
// [Writer.Fail] or [Writer.Panicked]; the records the report counted stay
// in Stats.Dropped). It runs on a logging goroutine, under no lock of the
// Writer's, or on Flush's or Close's. A panic in it is recovered and
// counted in Stats.Panics.
type Report func(Drops) *Record

// Drops is what a drop report reports: the records lost at one point of a
// shard's stream since the last report.
type Drops struct {
	// Total is the number of records lost; it is never 0 in a report.
	Total uint64
	// ByLevel splits Total by level, in the order of [DropLevels].
	ByLevel [4]uint64
	// WaitedOut counts, of Total, the records at or above KeepLevel that
	// waited Options.KeepWait for room and found none.
	WaitedOut uint64
	// WaitedOutByLevel splits WaitedOut by level, in the order of
	// [DropLevels].
	WaitedOutByLevel [4]uint64
}

// DropLevels returns the levels that drops are counted under, in the
// order of Drops.ByLevel: slog.LevelDebug, LevelInfo, LevelWarn and
// LevelError. A record of level l is counted under the highest of them at
// or below l, and under slog.LevelDebug when l is below them all.
func DropLevels() [4]slog.Level { return engine.DropLevels() }

// JSONReport is the drop report of a plain logsink.Writer, the default
// [Report]: one JSON line at level WARN,
//
//	{"time":"2026-12-02T03:04:05.123456789Z","level":"WARN","msg":"logsink: dropped records","dropped":1234,"dropped_by_level":{"INFO":1234}}
//
// whose "msg" is logsink.DroppedMessage and whose "dropped_by_level" holds
// the levels that lost records, named as slog names them. When records
// waited out (Options.KeepWait), two more keys say how many, of
// "dropped", and at which levels:
//
//	...,"dropped_by_level":{"INFO":1230,"WARN":4},"waited_out":4,"waited_out_by_level":{"WARN":4}}
//
// It allocates nothing.
func JSONReport(d Drops) *Record { return (*Record)(engine.JSONReport(engine.Drops(d))) }
