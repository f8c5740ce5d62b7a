package logsink

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/shardedsink/shardedsink/internal/fielderr"
	"github.com/shardedsink/shardedsink/logsink/internal/engine"
	"github.com/shardedsink/shardedsink/sink"
)

// The defaults that the zero value of each [Options] field stands for.
const (
	// DefaultShards is the default number of shards, each with one drain
	// worker that copies formatted records into Writes.
	DefaultShards = 2
	// DefaultRingCapacity is the default number of records each shard
	// buffers. A ring slot takes 16 bytes on 64-bit platforms and points
	// to a pooled record buffer of 416 bytes that holds a formatted record
	// of up to 352 bytes: a default ring takes 128 KiB, up to 3.3 MiB more
	// while it is full, plus the records longer than that.
	DefaultRingCapacity = 8192
	// DefaultBatchSize is the default number of records a drain worker
	// takes from its ring at once and copies into Writes of at most 256
	// KiB.
	DefaultBatchSize = 1024
	// DefaultMaxDelay is the default [Buffering.MaxDelay].
	DefaultMaxDelay = 100 * time.Microsecond
	// DefaultKeepLevel is the default [Options.KeepLevel].
	DefaultKeepLevel = slog.LevelWarn
	// DefaultKeepWait is the default [Buffering.KeepWait]: how long a record
	// at or above KeepLevel waits for room before it is shed. The package
	// doc ("Waiting for room") has what a burst into a stalled
	// destination loses, and what a caller waits, at 0, 1 ms and 10 ms.
	DefaultKeepWait = time.Millisecond
	// DefaultMaxQueuedBytes is the default [Buffering.MaxQueuedBytes]: 64
	// MiB of records longer than a ring slot holds, on top of the slots.
	DefaultMaxQueuedBytes = 64 << 20
	// DefaultSpillBytes is the default [Buffering.SpillBytes]: 1 GiB.
	DefaultSpillBytes = 1 << 30
)

// ErrInvalidOptions is wrapped by every error that [New] returns for bad
// options. Each such error names the field and the value it rejects.
var ErrInvalidOptions = errors.New("logsink: invalid options")

// ErrClosed is returned by [Writer.Flush] once the writer is closed.
var ErrClosed = errors.New("logsink: writer is closed")

// Options configures a [Writer]. A nil *Options, and the zero value of
// every field, means the default.
type Options struct {
	// Level is the level of the records written with [Writer.Write] and
	// [Stream.Write], which carry none of their own (WriteLevel gives one).
	// Default slog.LevelInfo.
	Level slog.Level
	// KeepLevel is the level from which records are shed last: an eighth
	// of each ring (one slot in a ring of 2 to 15) is a reserve that only
	// records at or above KeepLevel may fill (a drop report travels in the
	// slot of the record after it), so that while records below it are
	// being dropped, these are not. Default DefaultKeepLevel
	// (slog.LevelWarn); read once, by New.
	KeepLevel slog.Leveler

	// Buffering sizes the rings and their workers, bounds the bytes the
	// records take, says how long a record at or above KeepLevel waits for
	// room, and puts a spill tier behind the rings: [Buffering] says what
	// each field costs.
	Buffering

	// Name prefixes the Writer's own messages (its errors, its panic
	// reports) and names its sink. Default "logsink".
	Name string
	// OnError, when set, is called with every error of a Write to the
	// writer and every error of a front-end's formatting, one call at a
	// time, outside every lock of the Writer's: on the goroutine that met
	// the error (a drain worker, or the one that logs), or, when a call is
	// in progress, on the goroutine making it, after it; nobody waits for
	// a call of another. While one call lasts, up to 64 errors wait, and
	// one error counts the rest. It must not log through this Writer. A
	// panic in it is recovered and counted in Panics.
	OnError func(error)
	// Logger receives the Writer's own reports: the first recovered panic
	// of each minute, with its stack. Default: a text logger on os.Stderr,
	// not slog.Default(), which may well write to this Writer.
	Logger *slog.Logger
}

// Buffering is how a Writer holds the records that wait for the
// destination: the rings and their drain workers, the bytes the records
// take, the waits of a record at or above KeepLevel and of the hand-off,
// and a spill tier on disk. [Options] embeds it, and so do the options of
// slogsink, zapsink and zerologsink, where each field means what it says
// here. The zero value of every field means its default.
type Buffering struct {
	// Shards is the number of rings, each with one drain worker. Default
	// DefaultShards (2), at most sink.MaxShards.
	Shards int
	// RingCapacity is the number of records each ring holds; a record that
	// finds its ring full is dropped and counted. Default
	// DefaultRingCapacity (8192), at most sink.MaxRingCapacity.
	RingCapacity int
	// BatchSize is the most records a drain worker takes at once. Default
	// DefaultBatchSize (1024), clamped to RingCapacity.
	BatchSize int
	// MaxDelay is the longest a drain worker holds fewer than BatchSize
	// records before it writes them (sink.Config.MaxDelay): a record
	// reaches the writer at most this much later than it would otherwise
	// (plus the timer's lateness). Meanwhile the worker sleeps instead of
	// following the loggers record by record, so that it does not pull
	// the ring's cache lines from under them (what that saves the caller
	// of an Info into a fast writer: docs/benchmarks.md, "Logging", the
	// third table). Flush and Close never wait for it. Default
	// DefaultMaxDelay (100 µs); negative: write at once.
	MaxDelay time.Duration
	// KeepWait is the longest a record at or above KeepLevel waits for
	// room, when its ring (reserve included) or its shard's share of
	// MaxQueuedBytes is full, before it is shed: the caller parks (no
	// spinning) until a drain worker frees room, the wait ends, or Close
	// begins. A record shed so is counted in Stats.WaitedOut, and the drop
	// report says how many waited out, by level ("waited_out"). Records
	// below KeepLevel never wait; a record larger than its shard's share
	// of MaxQueuedBytes is shed at once, as is a record once Close has
	// begun. A record that finds room waits for nothing and pays nothing
	// for this option. Default DefaultKeepWait (1 ms); negative: never
	// wait.
	KeepWait time.Duration
	// MaxQueuedBytes bounds the memory of the records longer than a ring
	// slot holds (352 bytes), which allocate their bytes: those in the
	// rings and in the batches being written (a Write that stalls keeps
	// its batch counted) never sum to more, so a flood of large records
	// into a stalled writer is shed, counted (Stats.DroppedForBytes) and
	// reported like a full ring, and does not pin the heap. Each shard has
	// MaxQueuedBytes/Shards; records below KeepLevel may fill seven eighths
	// of it, so that those at or above it find room. A record larger than
	// a shard's share is taken only while the shard holds no bytes, and
	// then alone: until it is written the shard sheds every other record
	// longer than a slot (those that fit their slot take no bytes and
	// still go in). The record buffers queued come on top: RingCapacity ×
	// Shards × 416 bytes at most (6.5 MiB by default). Default
	// DefaultMaxQueuedBytes (64 MiB); negative: no bound but the slots.
	//
	// It costs every push a call that reads the record's size, and a
	// record longer than a slot one atomic add on its shard's byte
	// counter; the drain worker gives the bytes back with one add per
	// batch. A front-end that formats on the caller sheds a record for
	// bytes once it is formatted (its size is known only then).
	// docs/benchmarks.md ("Logging") has the cost against no bound.
	MaxQueuedBytes int

	// SpillDir, when set, puts a spill tier on disk behind the rings
	// (sink.Config.Spill; the sink package's doc, "The spill tier"): while
	// a Write runs longer than sink.SlowDrain (a stalled pipe, a full
	// disk), the records in the rings go to segment files in SpillDir,
	// and callers whose ring is full park while they do, instead of
	// shedding; the records are written later, in order per Stream. So a
	// stalled destination loses nothing until SpillBytes is full; then
	// records are shed and counted as without the tier. A Writer started
	// on the directory writes what the last one left first
	// (Stats.Recovered). The directory is the Writer's alone. Default
	// off.
	SpillDir string
	// SpillBytes is the spill tier's disk budget. Default
	// DefaultSpillBytes (1 GiB); set only with SpillDir. At least 64 KiB
	// a shard (sink.MinSpillShardBytes × Shards: 128 KiB for the default
	// 2 shards).
	SpillBytes int64
	// SpillSync is how often spilled records are fsynced: what a crash
	// can lose of them. Default sink.DefaultSpillSync (1 s).
	SpillSync time.Duration

	// DisableHandOff turns the hand-off off (sink.Config.DisableHandOff):
	// a record whose ring is full is shed at once even when the drain
	// worker is only short of CPU, as before the hand-off existed. By
	// default such a record waits for the worker (the package doc,
	// guarantee 1).
	DisableHandOff bool
}

// Check reports what [New] would refuse of w and o, without starting
// anything: nil, or an error wrapping [ErrInvalidOptions] that names
// every bad field and its value. A front-end with checks of its own adds
// these to its errors, so that one error names them all at once.
func (o *Options) Check(w io.Writer) error {
	_, err := o.settle(w)
	return err
}

// settle validates o and applies the defaults. Every invalid field is
// reported, each in an error that wraps ErrInvalidOptions.
func (o *Options) settle(w io.Writer) (engine.Settings, error) {
	if o == nil {
		o = &Options{}
	}
	errs := fielderr.New(ErrInvalidOptions)
	bad := errs.Add
	if w == nil {
		bad("w", "nil", "New needs a writer")
	}
	if o.Shards < 0 {
		bad("Shards", o.Shards, "must be positive, or zero for the default 2")
	} else if o.Shards > sink.MaxShards {
		bad("Shards", o.Shards, fmt.Sprintf("must be at most sink.MaxShards (%d)", sink.MaxShards))
	}
	if o.RingCapacity < 0 {
		bad("RingCapacity", o.RingCapacity, "must be positive, or zero for the default 8192")
	} else if o.RingCapacity > sink.MaxRingCapacity {
		bad("RingCapacity", o.RingCapacity, fmt.Sprintf("must be at most sink.MaxRingCapacity (%d)", sink.MaxRingCapacity))
	}
	if o.BatchSize < 0 {
		bad("BatchSize", o.BatchSize, "must be positive, or zero for the default 1024")
	}
	if o.SpillBytes < 0 {
		bad("SpillBytes", o.SpillBytes, "must be positive, or zero for the default 1 GiB")
	} else if o.SpillBytes > 0 && o.SpillDir == "" {
		bad("SpillBytes", o.SpillBytes, "is set but SpillDir is not: the spill tier needs a directory")
	} else if o.SpillDir != "" {
		shards := int64(cmp.Or(o.Shards, DefaultShards))
		if o.Shards < 0 || o.Shards > sink.MaxShards {
			shards = 1 // reported above
		}
		if cmp.Or(o.SpillBytes, DefaultSpillBytes) < shards*sink.MinSpillShardBytes {
			bad("SpillBytes", o.SpillBytes, fmt.Sprintf("must be at least sink.MinSpillShardBytes (%d) a shard: %d for %d shards",
				sink.MinSpillShardBytes, shards*sink.MinSpillShardBytes, shards))
		}
	}
	if o.SpillSync < 0 {
		bad("SpillSync", o.SpillSync, "must be positive, or zero for the default 1s")
	}
	if err := errs.Err(); err != nil {
		return engine.Settings{}, err
	}
	s := engine.Settings{
		Name:           cmp.Or(o.Name, "logsink"),
		Level:          o.Level,
		KeepLevel:      DefaultKeepLevel,
		KeepWait:       orDefault(o.KeepWait, DefaultKeepWait),
		Shards:         cmp.Or(o.Shards, DefaultShards),
		RingCapacity:   cmp.Or(o.RingCapacity, DefaultRingCapacity),
		BatchSize:      cmp.Or(o.BatchSize, DefaultBatchSize),
		MaxDelay:       orDefault(o.MaxDelay, DefaultMaxDelay),
		MaxQueuedBytes: orDefault(o.MaxQueuedBytes, DefaultMaxQueuedBytes),
		DisableHandOff: o.DisableHandOff,
		SpillDir:       o.SpillDir,
		SpillSync:      o.SpillSync,
		SpillBytes:     cmp.Or(o.SpillBytes, DefaultSpillBytes),
		OnError:        o.OnError,
		Logger:         o.Logger,
	}
	if o.KeepLevel != nil {
		s.KeepLevel = o.KeepLevel.Level()
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return s, nil
}

// orDefault is v's setting of a field whose zero value means def and whose
// negative values mean off (0 in the engine's terms).
func orDefault[T time.Duration | int](v, def T) T {
	if v == 0 {
		return def
	}
	return max(0, v)
}
