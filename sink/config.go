package sink

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"runtime"
	"time"

	"github.com/shardedsink/shardedsink/internal/fielderr"
	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/vyukov"
)

// The defaults that the zero value of each [Config] field stands for.
const (
	DefaultName             = "sink"
	DefaultRingCapacity     = 8192
	DefaultBatchSize        = 256
	DefaultOverloadInterval = 5 * time.Second
	// DefaultHandOffWait is the default of [Config.HandOffWait], the
	// longest a push waits in all for a drain worker short of CPU: 256
	// producers on locked OS threads on 2 cores, none refused, waited up
	// to 22.7 to 58 ms a run (BenchmarkStarved; docs/benchmarks.md, "What
	// a push waits for").
	DefaultHandOffWait = 100 * time.Millisecond

	// MaxShards is the largest Config.Shards that New accepts: each shard
	// has its own worker goroutine, and a drain worker per core is the
	// intended scale.
	MaxShards = 1024
	// MaxRingCapacity is the largest Config.RingCapacity that New accepts
	// (2^24 values per ring; a vyukov ring holds a value and an 8-byte
	// sequence number per slot, so 16 MiB of slots for an empty struct and
	// more for anything larger, per shard).
	MaxRingCapacity = 1 << 24
)

// The defaults of what Config does not offer: the shard count's factors
// (DefaultShards), the steal budgets, and the idle workers' sleeps.
const (
	defaultShardsPerP   = 4  // the default shard count is at most defaultShardsPerP × GOMAXPROCS...
	defaultMaxShards    = 32 // ...and at most defaultMaxShards with stack homes
	defaultMaxCPUShards = 64 // ...or a ring per CPU, at most defaultMaxCPUShards, with CPU homes (see DefaultShards)
	// defaultStealVictims and defaultStealItems bound a round of stealing:
	// at most that many victims, and values from each.
	defaultStealVictims = 2
	defaultStealItems   = 64
	// defaultPollSleep is the sleep between two looks at the rings of an
	// idle worker in IdlePoll mode: 100 µs, which Go's timers on small
	// Linux VMs stretch to about 1 ms (go run ./bench/idle -mode poll;
	// docs/benchmarks.md, "Idle workers (sink)").
	defaultPollSleep = 100 * time.Microsecond
	// defaultWakeRecheck is the longest a worker sleeps in IdleWake mode
	// before it looks at its ring again without being woken: the safety
	// net for a doorbell that a ring backend could let slip (see
	// IdleWake). With the default ring and no IdleSleep there is no
	// recheck.
	defaultWakeRecheck = 100 * time.Millisecond
)

// IdleMode says what a drain worker does when its own ring and the rings it
// may steal from are empty.
type IdleMode int

const (
	// IdleWake, the default, parks an idle worker until a producer rings
	// its shard's doorbell. At the first round that finds nothing, the
	// worker sets its shard's sleeping flag, looks at its ring once more
	// and blocks on a one-slot doorbell channel. A producer whose
	// push succeeds loads that flag (a read of a cache line that is written
	// only when the worker falls asleep or wakes) and, when it is set, clears
	// it with a compare-and-swap and sends on the doorbell without blocking;
	// only the producer that wins the swap pays for the send.
	//
	// With the default [vyukov] ring no doorbell slips (the proof is in
	// the sink's source, at worker.park), so a parked worker sets no timer
	// and an idle sink costs nothing until a push. A ring whose Len is not
	// synchronised with its push (ring/chanring's) could let a doorbell
	// slip; with any Config.Ring the sleeping worker finds such a value
	// when its safety-net timer, [Config.IdleSleep] (default 100 ms),
	// fires, as it does with the default ring when
	// IdleSleep is set.
	//
	// [vyukov]: https://pkg.go.dev/github.com/shardedsink/shardedsink/ring/vyukov
	IdleWake IdleMode = iota
	// IdlePoll is pure polling: an idle worker sleeps
	// [Config.IdleSleep] (default 100 µs) and looks again.
	// Producers never wake anyone and the push path reads no flag that a
	// worker ever sets; only [Sink.Flush] and [Sink.Shutdown] cut a sleep
	// short. It costs CPU while idle and bounds the latency of an
	// idle sink by the real length of a short sleep, which is about 1 ms on
	// small Linux VMs (go run ./bench/idle -mode poll).
	IdlePoll
	// idleBackoff is adaptive polling (IdleSleep doubling up to
	// defaultWakeRecheck, reset by work). It is measured against the other
	// two in the package benchmarks and not offered (docs/design.md, "sink:
	// mechanism", says why): Config.Idle rejects it, and only the
	// package's tests select it (experiments).
	idleBackoff
)

// String returns "wake", "poll", or "IdleMode(N)".
func (m IdleMode) String() string {
	switch m {
	case IdleWake:
		return "wake"
	case IdlePoll:
		return "poll"
	case idleBackoff:
		return "backoff"
	default:
		return fmt.Sprintf("IdleMode(%d)", int(m))
	}
}

// MarshalText returns the name that [IdleMode.String] gives.
func (m IdleMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText sets m from "wake" or "poll", so that an IdleMode can come
// from a flag (flag.TextVar) or a configuration file.
func (m *IdleMode) UnmarshalText(text []byte) error {
	switch string(text) {
	case "wake":
		*m = IdleWake
	case "poll":
		*m = IdlePoll
	default:
		return fmt.Errorf("sink: unknown idle mode %q (want wake or poll)", text)
	}
	return nil
}

// Config configures a [Sink]. The zero value of every field means its
// default, so Config[T]{} is a complete configuration; negative sizes and
// durations are errors. Shard count and ring capacity are fixed for the life
// of the sink.
type Config[T any] struct {
	// Name labels the sink in Stats, in Overload events and in log records.
	// Default "sink".
	Name string
	// Shards is the number of rings, each with its own drain worker.
	// Default: [DefaultShards]: where Push takes its home from the CPU
	// (linux/amd64 with RDPID) a ring per CPU the process may run on, at
	// most 4 × GOMAXPROCS and 64; elsewhere 4 × GOMAXPROCS clamped to [1,
	// 32]. One shard gives one global FIFO order, at the price of one
	// contended ring. With CPU homes and more shards than CPUs, each CPU
	// owns a group of shards, over which Sink.Push spreads its goroutines,
	// and a Sink.Push whose home is full tries every other shard: the
	// whole Shards × RingCapacity takes a burst.
	//
	// New allocates every ring at once: RingCapacity slots of an 8-byte
	// sequence number and a value each (vyukov), plus a BatchSize buffer per
	// worker and 384 bytes per shard. With the default RingCapacity and
	// BatchSize, where GOMAXPROCS is the number of CPUs:
	//
	//	GOMAXPROCS  homes  shards  8-byte values  32-byte values  64-byte values
	//	2           CPU    2       260 KiB        656 KiB         1.2 MiB
	//	2           stack  8       1.0 MiB        2.6 MiB         4.6 MiB
	//	8           CPU    8       1.0 MiB        2.6 MiB         4.6 MiB
	//	8           stack  32      4.1 MiB        10.2 MiB        18.5 MiB
	//	64          CPU    64      8.1 MiB        20.5 MiB        37.0 MiB
	//	64          stack  32      4.1 MiB        10.2 MiB        18.5 MiB
	Shards int
	// RingCapacity is the number of values each shard's ring holds. A push
	// into a full ring sheds a value, as Overflow says, and counts it.
	// Default 8192.
	RingCapacity int
	// BatchSize is the most values handed to one Drain call. Default 256,
	// clamped to RingCapacity.
	BatchSize int
	// Ring creates each shard's ring. It must return a ring whose Cap is
	// exactly the capacity asked for. Default vyukov.Factory[T]: lock-free,
	// and of this module's backends the one with a closed mark of its own
	// and the ForcePush that DropOldest needs. Swap it to compare backends
	// or for a ring that is simpler to reason about: mutex.Factory[T]
	// (ring/mutex), the simplest correct ring, or chanring.Factory[T]
	// (ring/chanring), a buffered Go channel, the baseline of what Go
	// programs use (see the example). Shutdown closes the rings: a ring
	// with a method Close() bool that is one atomic step with respect to
	// every push (vyukov.Ring's contract: a push either took effect before
	// the close or fails) is closed as it is, at no cost to a push; any
	// other ring (mutex, chanring) gets a guard that counts the pushes in
	// flight, two atomic read-modify-writes per push on a word the shard's
	// producers share.
	Ring ring.Factory[T]
	// OverloadInterval is how often the overload monitor sums the drop
	// counters. Default 5 s.
	OverloadInterval time.Duration
	// OnOverload is called by the monitor, at most once per
	// OverloadInterval, when values were dropped since its last check, and
	// once more when Shutdown begins if values were dropped since then (the
	// last, partial interval). Default: an Error record through Logger. A
	// panic in it is recovered and logged; a call of runtime.Goexit is
	// logged and the monitor goes on in a new goroutine. It must not call
	// Shutdown, which waits for the monitor to exit.
	OnOverload func(Overload)
	// Logger receives the reports of drain panics and the default overload
	// reports. Default: slog.Default() at the time of each report. Do not
	// point it at a handler that writes into this same sink. A Logger that
	// panics loses that record (one line on standard error says so) but
	// not the worker or the monitor that reported.
	Logger *slog.Logger

	// MaxDelay is the longest a worker holds a batch that is not full
	// before it calls Drain with it. Zero, the default, calls Drain at once
	// with whatever a round took, down to one value. With MaxDelay > 0 a
	// worker that has taken fewer than BatchSize values keeps them and goes
	// on taking (from its own ring as producers wake it, and by stealing)
	// until it holds BatchSize values or MaxDelay has passed since it took
	// the batch's first value, whichever comes first; then it calls Drain.
	// The clock starts when the worker takes the first value from a ring,
	// not when it was pushed (a push takes no timestamp), so a value's
	// wait in the batch is at most MaxDelay plus the timer's lateness; the
	// time before a worker takes it is not counted, and with IdleWake it
	// is the wake-up latency (microseconds to a few milliseconds). An idle
	// worker stays parked: the timer runs only while a batch is held.
	// Flush and Shutdown never wait for it: while a Flush runs, and once
	// Shutdown begins, a held batch goes to Drain at once.
	MaxDelay time.Duration
	// Overflow chooses which value is shed when a push finds its ring
	// full. Default DropNewest, the pushed value. DropOldest needs a ring
	// that can displace its oldest value in one step (a method ForcePush(v
	// T) (old T, displaced, ok bool) with vyukov.Ring's contract; mutex and
	// chanring have none, and New refuses them). Either way the shed value
	// is counted on the shard's drop counter.
	Overflow Overflow

	// SizeOf, optional, returns the bytes that a value stands for (the
	// length of the buffer a pointer holds, say): what MaxBatchBytes and
	// MaxQueuedBytes count. It is required by them and used by nothing
	// else. It must be safe for concurrent use, must not panic, and must
	// return the same size for a value each time: the sink calls it when
	// a value is pushed (with MaxQueuedBytes) and again when a worker
	// takes it. A size below 0 or above 2^48 is a programmer's mistake and
	// panics where it is returned: in the push, or, with MaxBatchBytes
	// alone, in the drain worker, which ends the program. With SizeOf set
	// each worker keeps 16 more bytes per BatchSize slot (each value's
	// size and shard).
	SizeOf func(T) int
	// MaxBatchBytes, when above 0, bounds each Drain batch in bytes as
	// BatchSize bounds it in values: the sizes of a batch's values sum to
	// at most MaxBatchBytes, but for a value larger than it, which is
	// handed to Drain alone. A worker still takes up to BatchSize values
	// a round and hands them on in as many batches as the bound needs
	// (the last one may be short); MaxDelay holds a batch only while it
	// is short of both bounds. It costs the workers a SizeOf call per
	// value and the producers nothing. Default 0: no bound.
	MaxBatchBytes int
	// MaxQueuedBytes, when above 0, bounds the memory that the sink holds
	// for its values: the sizes of the values in the rings, and in
	// batches whose Drain call has not returned yet, sum to at most
	// MaxQueuedBytes. A value's bytes are given back when the Drain call
	// that got it returns (or panics), or when DropOldest displaces it,
	// not when a worker takes it: a Drain that stalls holds its batch, so
	// counting it is what makes the bound a bound on memory.
	//
	// The budget is split evenly over the shards (MaxQueuedBytes/Shards
	// each, rounded down), as slots are, so that a push touches no
	// counter that other shards' producers write: a push whose shard's
	// share would be exceeded is refused, counted in Dropped and in
	// DroppedForBytes of Stats, whatever Overflow says (displacing old
	// values to make room in bytes could take any number of them), and
	// Sink.Push tries the next shard first as it does for a full ring. A
	// value larger than a shard's share is accepted only into a shard
	// that holds nothing, and then alone, so that it is not shed for
	// ever: each shard holds at most the larger of its share and one
	// value. A value of size 0 takes no bytes and is admitted whatever the
	// shard holds; only a full ring refuses it.
	//
	// It costs a successful push a SizeOf call and, for a value of a size
	// above 0, one atomic compare-and-swap on its shard's byte counter
	// (retried when another push moved the counter in between), a locked
	// instruction like the ring's own, so a push costs up to about twice
	// as much; `bash
	// bench/pushcost/budget.sh` measures it (BenchmarkBudget, with the
	// alternative of one counter for the sink, which all CPUs would share),
	// and that a sink without a budget pushes as before the budget existed.
	// The worker gives bytes back with one add per Drain call and shard.
	// Stats().QueuedBytes reports the bytes held.
	// Default 0: no bound but the slots.
	MaxQueuedBytes int

	// Idle chooses what an idle worker does: IdlePoll spends CPU while idle
	// so that a push never wakes a worker. Default IdleWake.
	Idle IdleMode
	// IdleSleep is how long an idle worker sleeps when nothing wakes it:
	// the poll interval in IdlePoll mode (default 100 µs), set to trade
	// idle CPU against latency, and the safety-net recheck in IdleWake
	// mode (default 100 ms).
	IdleSleep time.Duration

	// DisableStealing keeps each shard's values on its own worker, so that
	// they reach Drain one batch at a time in the order they were accepted
	// (logsink needs that). By default a worker whose batch is short tops
	// it up from other shards (a few values from a few of them per round,
	// on the drain side only), and with IdleWake an idle worker is woken
	// to steal the values waiting behind a Drain call that has run for
	// SlowDrain.
	DisableStealing bool

	// HandOffWait is the longest a push waits in all, parked on a drain
	// worker short of CPU (or on the spiller): the one bound of the
	// hand-off, the package doc's "What a push waits for". Default
	// [DefaultHandOffWait] (100 ms). Set it shorter where a caller's
	// latency matters more than the values a starved worker would shed.
	HandOffWait time.Duration
	// DisableHandOff turns the hand-off off: a push into a full ring sheds
	// at once whatever the reason, as the sink did before it had one. Set
	// it where a push must never park, even behind a worker short of CPU.
	DisableHandOff bool

	// Spill, with a Dir, puts a spill tier on disk behind the rings: the
	// values a ring holds while a Drain call of its shard is slow (longer
	// than SlowDrain) go to disk instead of being shed, and reach Drain
	// later in the shard's order; pushes shed only when the disk budget
	// is full, the disk fails, or Shutdown has begun. See the package
	// doc, "The spill tier". It cannot be used with DropOldest. With
	// MaxQueuedBytes, a value's bytes go back to the budget when it is
	// spilled. Default off.
	Spill Spill[T]
}

// experiments are the design alternatives that the package's benchmarks
// measure and the sink does not offer, and the tests' seams. They are zero
// in every sink that New makes; only the package's tests set them
// (newTuned, in tuned_test.go).
type experiments struct {
	// watermark skips the yield after a batch while the home ring is more
	// than half full (TestWatermarkExperiment).
	watermark bool
	// sharedBudget keeps one byte counter for the whole sink instead of
	// one per shard (the alternative that BenchmarkBudget measures).
	sharedBudget bool
	// parkHook, when set, runs just before a PushWait caller blocks: it
	// lets a test free room at the worst instant.
	parkHook func(shard int)
	// reclaimHook, when set, runs where the spill tier is about to remove
	// a shard's done segments (spillTier.reclaimAll).
	reclaimHook func(shard int)
	// syncHook, when set, runs where the spill tier's syncer has synced a
	// shard's log, with Sync's error, before it counts what a failed
	// write lost (spillTier.syncAll).
	syncHook func(shard int, err error)
}

// settings is a Config after defaults, validation and normalisation.
type settings[T any] struct {
	name             string
	shards           int
	ringCapacity     int
	batchSize        int
	factory          ring.Factory[T]
	overloadInterval time.Duration
	onOverload       func(Overload) // nil: the default report through the logger
	logger           *slog.Logger   // nil: slog.Default() at each report
	idle             IdleMode
	idleSleep        time.Duration
	stealVictims     int // 0: stealing off
	stealItems       int
	maxDelay         time.Duration
	overflow         Overflow
	sizeOf           func(T) int   // nil unless a byte bound is set
	maxBatchBytes    int64         // 0: no bound
	maxQueuedBytes   int64         // 0: no bound
	handOffWait      time.Duration // 0: the hand-off is off
	spill            Spill[T]      // Dir == "": the tier is off
	// exp is zero but in the package's tests.
	exp experiments
	// noRecheck: an idle worker in IdleWake mode sets no safety-net
	// timer (the default vyukov ring, whose doorbell cannot slip, and no
	// IdleSleep of the user's).
	noRecheck bool
}

// Check reports what [New] would refuse of c's fields: nil, or an error
// wrapping [ErrInvalidConfig] that names every bad field and its value, as
// New's does. It is for a wrapper with checks of its own (natssink), so
// that one error names them all at once. What only New can find, a Ring
// factory that panics or returns a wrong ring, it does not.
func (c Config[T]) Check() error {
	_, err := c.settle(ActionFunc[T](func(context.Context, []T) {}))
	return err
}

// settle validates every field (check) and returns the settings with the
// defaults applied and normalised (settings). The error joins one error
// per invalid field, each wrapping ErrInvalidConfig and naming the field
// and its value.
func (c Config[T]) settle(action Action[T]) (settings[T], error) {
	if err := c.check(action); err != nil {
		return settings[T]{}, err
	}
	return c.settings(), nil
}

// check validates every field of c and action, field by field.
func (c Config[T]) check(action Action[T]) error {
	errs := fielderr.New(ErrInvalidConfig)
	bad := errs.Add
	if action == nil {
		bad("action", "nil", "a sink needs an Action")
	} else if f, ok := action.(ActionFunc[T]); ok && f == nil {
		bad("action", "ActionFunc(nil)", "a sink needs an Action")
	}
	if c.Shards < 0 {
		bad("Shards", c.Shards, fmt.Sprintf("must be positive, or zero for the default (DefaultShards(), %d here)", DefaultShards()))
	} else if c.Shards > MaxShards {
		bad("Shards", c.Shards, fmt.Sprintf("must be at most MaxShards (%d)", MaxShards))
	}
	if c.RingCapacity < 0 {
		bad("RingCapacity", c.RingCapacity, "must be positive, or zero for the default 8192")
	} else if c.RingCapacity > MaxRingCapacity {
		bad("RingCapacity", c.RingCapacity, fmt.Sprintf("must be at most MaxRingCapacity (%d)", MaxRingCapacity))
	}
	if c.BatchSize < 0 {
		bad("BatchSize", c.BatchSize, "must be positive, or zero for the default 256")
	}
	if c.OverloadInterval < 0 {
		bad("OverloadInterval", c.OverloadInterval, "must be positive, or zero for the default 5s")
	}
	if c.Idle != IdleWake && c.Idle != IdlePoll {
		bad("Idle", c.Idle, "must be IdleWake or IdlePoll")
	}
	if c.IdleSleep < 0 {
		bad("IdleSleep", c.IdleSleep, "must be positive, or zero for the default of the idle mode")
	}
	if c.MaxDelay < 0 {
		bad("MaxDelay", c.MaxDelay, "must be positive, or zero to drain at once")
	}
	if c.Overflow != DropNewest && c.Overflow != DropOldest {
		bad("Overflow", c.Overflow, "must be DropNewest or DropOldest")
	}
	if c.MaxBatchBytes < 0 {
		bad("MaxBatchBytes", c.MaxBatchBytes, "must be positive, or zero for no bound")
	}
	if c.MaxQueuedBytes < 0 {
		bad("MaxQueuedBytes", c.MaxQueuedBytes, "must be positive, or zero for no bound")
	}
	if c.SizeOf == nil {
		if c.MaxBatchBytes > 0 {
			bad("MaxBatchBytes", c.MaxBatchBytes, "needs SizeOf, which says how many bytes a value stands for")
		}
		if c.MaxQueuedBytes > 0 {
			bad("MaxQueuedBytes", c.MaxQueuedBytes, "needs SizeOf, which says how many bytes a value stands for")
		}
	} else if c.MaxBatchBytes <= 0 && c.MaxQueuedBytes <= 0 {
		bad("SizeOf", funcNameOf(c.SizeOf), "is set but neither MaxBatchBytes nor MaxQueuedBytes is: nothing would use it")
	}
	c.checkSpill(bad)
	return errs.Err()
}

// checkSpill validates Spill: a Dir needs a budget of at least
// MinSpillShardBytes per shard and a Codec, and rules out DropOldest; the
// other fields need a Dir.
func (c Config[T]) checkSpill(bad func(field string, value any, why string)) {
	sp := c.Spill
	if sp.SyncInterval < 0 {
		bad("Spill.SyncInterval", sp.SyncInterval, "must be positive, or zero for the default 1s")
	}
	if sp.Dir == "" {
		if sp.MaxBytes != 0 {
			bad("Spill.MaxBytes", sp.MaxBytes, "is set but Spill.Dir is not: the tier needs a directory")
		}
		if sp.Codec != nil {
			bad("Spill.Codec", fmt.Sprintf("%T", sp.Codec), "is set but Spill.Dir is not: the tier needs a directory")
		}
		return
	}
	shards := cmp.Or(c.Shards, DefaultShards())
	if c.Shards < 0 || c.Shards > MaxShards {
		shards = 1 // reported above
	}
	if sp.MaxBytes < int64(shards)*MinSpillShardBytes {
		bad("Spill.MaxBytes", sp.MaxBytes, fmt.Sprintf("must be at least MinSpillShardBytes (%d) per shard: %d for %d shards",
			MinSpillShardBytes, int64(shards)*MinSpillShardBytes, shards))
	}
	if sp.Codec == nil {
		bad("Spill.Codec", "nil", "the tier needs a Codec to write values to disk (BytesCodec for []byte, StringCodec for string)")
	}
	if c.Overflow == DropOldest {
		bad("Overflow", c.Overflow, "cannot be used with Spill: the tier keeps the old values that DropOldest would displace")
	}
}

// settings returns c's settings, c being valid: the defaults applied, the
// batch clamped to the ring, the steal budgets to the shard count and the
// batch, and one shard turning stealing off.
func (c Config[T]) settings() settings[T] {
	s := settings[T]{
		name:             cmp.Or(c.Name, DefaultName),
		shards:           cmp.Or(c.Shards, DefaultShards()),
		ringCapacity:     cmp.Or(c.RingCapacity, DefaultRingCapacity),
		batchSize:        cmp.Or(c.BatchSize, DefaultBatchSize),
		factory:          c.Ring,
		overloadInterval: cmp.Or(c.OverloadInterval, DefaultOverloadInterval),
		onOverload:       c.OnOverload,
		logger:           c.Logger,
		idle:             c.Idle,
		idleSleep:        c.IdleSleep,
		maxDelay:         c.MaxDelay,
		overflow:         c.Overflow,
		sizeOf:           c.SizeOf,
		maxBatchBytes:    int64(c.MaxBatchBytes),
		maxQueuedBytes:   int64(c.MaxQueuedBytes),
		handOffWait:      cmp.Or(c.HandOffWait, DefaultHandOffWait),
		spill:            c.Spill,
	}
	if s.spill.Dir != "" {
		s.spill.SyncInterval = cmp.Or(s.spill.SyncInterval, DefaultSpillSync)
	}
	if c.DisableHandOff {
		s.handOffWait = 0
	}
	if s.factory == nil {
		s.factory = vyukov.Factory[T]
	}
	if s.idleSleep == 0 {
		if s.idle == IdleWake {
			s.noRecheck = c.Ring == nil
			s.idleSleep = defaultWakeRecheck
		} else {
			s.idleSleep = defaultPollSleep
		}
	}
	s.batchSize = min(s.batchSize, s.ringCapacity)
	s.steal(defaultStealVictims, defaultStealItems, c.DisableStealing)
	return s
}

// steal sets the steal budgets (victims a round, values from each),
// clamped to the other shards and the batch; off turns stealing off.
func (s *settings[T]) steal(victims, items int, off bool) {
	s.stealVictims = min(victims, s.shards-1)
	s.stealItems = min(items, s.batchSize)
	if off {
		s.stealVictims = 0
	}
}

// newRing calls the Ring factory for one shard and checks what it returns:
// a factory that panics, returns nil (or a nil pointer in the interface,
// whose Cap then panics) or a ring of another capacity gives an error
// wrapping ErrInvalidConfig that names the factory function and what it did.
func newRing[T any](f ring.Factory[T], capacity int) (r ring.Ring[T], err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("%w: Ring = %s: panicked for capacity %d: %v",
				ErrInvalidConfig, funcName(f), capacity, p)
		}
	}()
	r = f(capacity)
	if r == nil {
		return nil, fmt.Errorf("%w: Ring = %s: returned a nil ring for capacity %d",
			ErrInvalidConfig, funcName(f), capacity)
	}
	if c := r.Cap(); c != capacity {
		return nil, fmt.Errorf("%w: Ring = %s: returned a ring of capacity %d for capacity %d",
			ErrInvalidConfig, funcName(f), c, capacity)
	}
	return r, nil
}

// funcName returns the name of the function f, such as
// "github.com/shardedsink/shardedsink/ring/vyukov.Factory[...]", or its type
// when the runtime does not know it.
func funcName[T any](f ring.Factory[T]) string { return funcNameOf(f) }

// funcNameOf is funcName for any function value.
func funcNameOf(f any) string {
	if fn := runtime.FuncForPC(reflect.ValueOf(f).Pointer()); fn != nil {
		return fn.Name()
	}
	return fmt.Sprintf("%T", f)
}
