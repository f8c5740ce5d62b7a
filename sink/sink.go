package sink

import (
	"context"
	"fmt"
	"log/slog"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/internal/layout"
	"github.com/shardedsink/shardedsink/internal/machine"
	"github.com/shardedsink/shardedsink/internal/serial"
)

// Action receives the values that the drain workers take from the rings.
type Action[T any] interface {
	// Drain handles one batch of at most BatchSize values (and, with
	// MaxBatchBytes, of at most that many bytes, or one larger value). It
	// runs on the drain workers, never on a producer; several workers may
	// call it at once, so it must be safe for concurrent use. It may block
	// or do I/O: a slow Drain fills the rings, which then shed; a push
	// never waits on the destination (the package doc, "What a push waits
	// for"). The batch slice is reused and cleared after Drain
	// returns, so Drain must not keep it or any reference into it. ctx is
	// cancelled only when the ctx given to Shutdown ends before the workers
	// have finished; it carries a mark by which Flush and Shutdown, called
	// with it, return ErrCalledFromDrain instead of waiting for this very
	// call. A panic in Drain is recovered, counted (Stats().DrainPanics)
	// and logged with its stack (at most one stack a minute), and that
	// batch is lost. A call of runtime.Goexit (t.FailNow in a test) is
	// treated the same way, and the shard's worker goes on in a new
	// goroutine.
	Drain(ctx context.Context, batch []T)
}

// ActionFunc adapts a function to an [Action].
type ActionFunc[T any] func(ctx context.Context, batch []T)

// Drain calls f(ctx, batch).
func (f ActionFunc[T]) Drain(ctx context.Context, batch []T) { f(ctx, batch) }

// Sink is a sharded fire-and-forget sink: producers push values into one of
// its bounded rings without waiting, and one drain worker per ring hands
// them to the [Action] in batches. See the package documentation for the
// guarantees and the costs.
//
// A Sink is safe for concurrent use. It must not be copied.
type Sink[T any] struct {
	_ layout.NoCopy

	cfg     settings[T]
	action  Action[T]
	shards  []shard[T]
	handles []Handle[T] // handles[i] pushes into shards[i]; immutable
	// cpuHomes maps CPU numbers to home entries (a shard, or a group of
	// shards) for Push when homes come from the CPU (see cpuHomeTable);
	// nil when they come from the stack. Immutable after New.
	cpuHomes []uint32
	// grouped is set when some CPU of cpuHomes owns more than one shard:
	// a push whose home is full then tries every other shard. Immutable
	// after New.
	grouped bool

	// waits[i] holds the PushWait calls parked for room in shards[i]; see
	// wait.go.
	waits []waitQueue
	// handOffs[i] holds the pushes parked on shards[i]'s worker (nil with
	// the hand-off off), and drains[i] what that worker records about its
	// Drain calls; see handoff.go and drainstate.go. epoch is the zero of
	// their clock (Sink.now).
	handOffs []handOffQueue
	drains   []drainState
	epoch    time.Time
	// ledgerChecks[i] is shard i's ledger at its last check, under its
	// consumer mutex; nil unless checkLedgers (ledger.go).
	ledgerChecks []account
	// timed is 1 once the Action has timed a call into its destination
	// (callTimer): the drain states are then judged by those calls, all
	// together (drainstate.go). A plain int32 used through sync/atomic's
	// functions.
	timed   int32
	waiters sync.Pool // of *valueWaiter[T], for parked pushes

	// drainCtx is the ctx of every Drain call. It is cancelled when the ctx
	// given to Shutdown ends first, or when Shutdown has finished.
	drainCtx    context.Context
	cancelDrain context.CancelFunc
	// finalCtx is the ctx of the Drain calls of the final drain: drainCtx
	// with the deadline of Shutdown's ctx. Shutdown sets it before it sets
	// stopping, and a worker reads it only after it loaded stopping as true:
	// that atomic store and load are the happens-before edge.
	finalCtx context.Context

	// phase is where the sink is in its life (see lifecycle.go's
	// phases); stop is closed when it reaches phaseStopping, and wakes
	// every goroutine that sleeps on the sink. A plain uint32 used through
	// sync/atomic's functions (see shard's "Atomics" note: the drop paths
	// that load it are compiled in the user's package).
	phase   uint32
	stop    chan struct{}
	running atomic.Int32  // workers and monitor still running
	done    chan struct{} // closed by the last of them to exit

	// closers[i] closes shards[i].ring: the ring's own Close, or its
	// guard's (see equip). Shutdown closes every ring before it stops the
	// workers.
	closers []closer

	// shutdownSem serialises Shutdown calls: one slot, held by the call
	// that works. The fields below it are used only while holding it.
	shutdownSem serial.Slot
	lastDone    chan struct{} // closed once the Drain calls of the last Shutdown have returned

	// flushing counts the Flush calls in progress. While it is above zero
	// a worker does not hold a batch for MaxDelay. Only Flush writes it.
	flushing atomic.Int32

	// faults is what the workers and the monitor record about failed
	// Drain calls; see worker.go.
	faults faults

	// spill is the spill tier, nil when Config.Spill is off; see
	// spilltier.go.
	spill *spillTier[T]

	// overloads counts the monitor's overload reports (Stats.Overloads);
	// only the monitor adds to it.
	overloads atomic.Uint64

	// watchTimer is the steal watch's timer (stealwatch.go), received by
	// the monitor; nil unless IdleWake with stealing on.
	watchTimer *time.Timer

	// cursor hands out shards round-robin for Handle and for the pool
	// misses of Push. A successful push never touches it.
	// A plain uint64 used through atomic.AddUint64 (see shard's "Atomics"
	// note); the zero-length array keeps it 8-byte aligned on 32-bit
	// platforms.
	_      [layout.CacheLine]byte
	_      [0]atomic.Uint64
	cursor uint64
	_      [layout.CacheLine - 8]byte

	// waiting is the number of PushWait calls parked in the waits queues
	// (raised before a caller's last look at its ring, lowered by whoever
	// takes it out of its queue). The drain workers load it once per batch
	// and look at the queues only when it is above zero: the whole cost of
	// PushWait to a sink where nobody waits. A plain int32 used through
	// sync/atomic's functions (see shard's "Atomics" note), alone on its
	// cache lines: parking callers write it, every worker reads it.
	waiting int32
	_       [layout.CacheLine - 4]byte

	// watching is 1 while the steal watch is armed, and stranded while it
	// last found values waiting behind a Drain call (stealwatch.go). Plain
	// int32s used through sync/atomic's functions, on cache lines of their
	// own: every Drain call loads watching, every park stranded, and each
	// is written only when it changes (at most twice per stealAfter).
	watching int32
	stranded int32
	_        [layout.CacheLine - 8]byte
}

// New validates cfg, builds the rings and starts one drain worker per shard
// and the overload monitor. It returns an error wrapping [ErrInvalidConfig]
// that names the field and the value of every invalid field: a negative size
// or duration, a Shards above [MaxShards] or a RingCapacity above
// [MaxRingCapacity], an unknown idle mode, a nil action, or a Ring factory
// that panics, returns nil or returns a ring of the wrong capacity (the
// error names the factory function), or returns a ring that is already
// closed (a ring serves one sink: Shutdown closes it, so rings cannot be
// reused by a later sink). Nothing is started then.
//
// The workers run until [Sink.Shutdown]; a sink that is dropped without
// Shutdown keeps its goroutines.
func New[T any](cfg Config[T], action Action[T]) (*Sink[T], error) {
	s, err := build(cfg, action)
	if err != nil {
		return nil, err
	}
	s.start()
	return s, nil
}

// build validates cfg and builds the sink without starting anything.
func build[T any](cfg Config[T], action Action[T]) (*Sink[T], error) {
	st, err := cfg.settle(action)
	if err != nil {
		return nil, err
	}
	return buildSettled(st, action)
}

// buildSettled builds a sink of st, settled settings, without starting
// anything.
func buildSettled[T any](st settings[T], action Action[T]) (*Sink[T], error) {
	s := &Sink[T]{
		cfg:         st,
		action:      action,
		shards:      make([]shard[T], st.shards),
		handles:     make([]Handle[T], st.shards),
		closers:     make([]closer, st.shards),
		stop:        make(chan struct{}),
		done:        make(chan struct{}),
		shutdownSem: serial.New(),
		waits:       make([]waitQueue, st.shards),
		drains:      make([]drainState, st.shards),
		epoch:       time.Now(),
	}
	if checkLedgers {
		s.ledgerChecks = make([]account, st.shards)
	}
	if st.handOffWait > 0 {
		s.handOffs = make([]handOffQueue, st.shards)
	}
	forces := make([]forcer[T], st.shards)
	for i := range s.shards {
		sh := &s.shards[i]
		r, err := newRing(st.factory, st.ringCapacity)
		if err != nil {
			return nil, err
		}
		if rc, ok := r.(interface{ IsClosed() bool }); ok && rc.IsClosed() {
			return nil, fmt.Errorf("%w: Ring = %s: returned a closed ring (a ring serves one sink: Shutdown closes it)",
				ErrInvalidConfig, funcName(st.factory))
		}
		pr, c, f, ok := equip(r, st.overflow)
		if !ok {
			return nil, fmt.Errorf("%w: Overflow = DropOldest: Ring = %s: its rings (%T) cannot displace a value (they have no ForcePush(v T) (old T, displaced, ok bool))",
				ErrInvalidConfig, funcName(st.factory), r)
		}
		sh.ring, forces[i] = pr, f
		s.closers[i] = c
		sh.doorbell = make(chan struct{}, 1)
		sh.sink = s
		s.handles[i] = Handle[T]{sh: sh, next: &s.handles[(i+1)%len(s.handles)], shard: i, s: s}
	}
	s.installBudgets(forces)
	if homesFromCPU() {
		s.cpuHomes = cpuHomeTable(homeCPUs(), st.shards)
		for _, e := range s.cpuHomes {
			s.grouped = s.grouped || e > firstMask
		}
	}
	// The ctx of every Drain call carries the sink, so that Flush and
	// Shutdown can tell a call made with it and refuse to wait for the
	// batch that the calling Drain holds.
	if st.idle == IdleWake && st.stealVictims > 0 || st.spill.Dir != "" {
		s.watchTimer = time.NewTimer(time.Hour)
		s.watchTimer.Stop()
	}
	s.drainCtx, s.cancelDrain = context.WithCancel(context.WithValue(context.Background(), drainMarker{}, s))
	s.finalCtx = s.drainCtx
	if st.spill.Dir != "" {
		sp, err := openSpill(st)
		if err != nil {
			s.cancelDrain()
			return nil, err
		}
		s.spill = sp
	}
	return s, nil
}

// drainMarker is the key under which the ctx of every Drain call holds the
// *Sink that made the call.
type drainMarker struct{}

// calledFromDrain reports whether ctx is, or derives from, the ctx of a
// Drain call of this sink.
func (s *Sink[T]) calledFromDrain(ctx context.Context) bool {
	return ctx.Value(drainMarker{}) == any(s)
}

// start starts the workers and the monitor.
func (s *Sink[T]) start() {
	s.running.Store(int32(len(s.shards)) + 1)
	for i := range s.shards {
		go newWorker(s, i, nil).run()
	}
	go s.monitor(0, 0)
	if s.spill != nil {
		go s.spill.run(s)
	}
}

// MustNew is like [New] but panics with New's error.
func MustNew[T any](cfg Config[T], action Action[T]) *Sink[T] {
	s, err := New(cfg, action)
	if err != nil {
		panic(err)
	}
	return s
}

// Name returns the sink's name.
func (s *Sink[T]) Name() string { return s.cfg.name }

// Shards returns the number of shards.
func (s *Sink[T]) Shards() int { return len(s.shards) }

// Handle returns a handle for the next shard in round-robin order, the
// original's issue(): handles taken one after another spread over all the
// shards. It costs one atomic add on a per-sink counter and allocates
// nothing; the handles of a sink are shared and immutable. Hot producers
// take one handle and keep it (one per request, connection or producer
// object).
func (s *Sink[T]) Handle() *Handle[T] {
	s.mustBeMade()
	n := uint64(len(s.shards))
	return &s.handles[(atomic.AddUint64(&s.cursor, 1)-1)%n]
}

// HandleFor returns the handle of the shard that key maps to: a home shard
// for a key the caller chooses (a connection, a tenant, a goroutine's own
// id). The same key always maps to the same shard of this sink, so the
// values pushed through handles for one key keep their order; different
// sinks, or a different shard count, may map it elsewhere. The key is mixed
// with the splitmix64 finalizer before it is reduced to a shard, so
// sequential keys spread evenly. Hash strings with hash/maphash first.
func (s *Sink[T]) HandleFor(key uint64) *Handle[T] {
	s.mustBeMade()
	return &s.handles[shardFor(key, len(s.shards))]
}

// shardFor maps key to [0, n): splitmix64's finalizer, then Lemire's
// multiply-shift reduction.
func shardFor(key uint64, n int) int {
	key ^= key >> 30
	key *= 0xbf58476d1ce4e5b9
	key ^= key >> 27
	key *= 0x94d049bb133111eb
	key ^= key >> 31
	hi, _ := bits.Mul64(key, uint64(n))
	return int(hi)
}

// Push pushes v into the ring of the caller's CPU (or stack) and reports
// whether it was accepted; a success writes nothing shared. A push never
// waits on the destination, however slow: a full ring sheds, and a push
// parks only while its drain worker is short of CPU behind a destination
// that keeps up (or, with Spill, while the spiller moves values to disk),
// for at most HandOffWait in all (the package doc, "What a push waits
// for"). A full home ring sends v to the next shard (with groups of
// shards, to every other): when all refuse, v is dropped and counted and
// Push returns false, or under [DropOldest] displaces the oldest value and
// returns true. Once Shutdown has begun Push returns false and counts v.
// A zero Sink panics. Use a [Handle] where one producer's values must keep
// their order. Homes and groups: docs/design.md, "sink: mechanism".
func (s *Sink[T]) Push(v T) bool {
	// The home: from the CPU where that is cheap to read (one call of a
	// three-instruction assembly function, allowed on the hot path by
	// name, then cpuEntry's mask and load, inlined), from the stack
	// otherwise. An entry above firstMask is a group of shards, spread by
	// the stack (a branch not taken with a ring per CPU). A zero Sink has
	// no CPU table and no shards: the stack path says so.
	var i int
	if len(s.cpuHomes) > 0 {
		e := s.cpuEntry(machine.CPU())
		i = int(e & firstMask)
		if e > firstMask {
			i += stackHome(int(e >> groupShift))
		}
	} else {
		if len(s.handles) == 0 {
			panicUnmade("Sink")
		}
		i = stackHome(len(s.handles))
	}
	// Handle.Push, inline (a call level costs as much as the push itself
	// when T is large), with one retry on the next shard (or, in a group,
	// every other shard); see there for the flag load.
	sh := &s.shards[i]
	if sh.ring.TryPush(v) {
		if sh.isSleeping() {
			sh.wake()
		}
		return true
	}
	if s.grouped {
		return s.pushAround(i, v)
	}
	if next := s.handles[i].next; next.sh != sh {
		sh = next.sh
		if sh.ring.TryPush(v) {
			if sh.isSleeping() {
				sh.wake()
			}
			return true
		}
	}
	if sh.slow != nil {
		return sh.refused(v) // DropOldest or a byte budget, on the second ring
	}
	return sh.shed()
}

// pushAround is the end of a Push whose home, in a group of shards, was
// full: it tries every other shard in turn from the next one, and when all
// refuse, drops v on the next shard (or displaces there, under
// DropOldest), as Push does with one retry.
//
//go:noinline
func (s *Sink[T]) pushAround(home int, v T) bool {
	if s.tryAround(home, v) {
		return true
	}
	sh := s.handles[home].next.sh
	if sh.slow != nil {
		return sh.refused(v)
	}
	return sh.shed()
}

// tryAround tries every shard but home, in turn from the next one, and
// reports whether one accepted v (its worker woken if it sleeps). It
// counts nothing.
func (s *Sink[T]) tryAround(home int, v T) bool {
	n := len(s.shards)
	for k := 1; k < n; k++ {
		j := home + k
		if j >= n {
			j -= n
		}
		if sh := &s.shards[j]; sh.ring.TryPush(v) {
			if sh.isSleeping() {
				sh.wake()
			}
			return true
		}
	}
	return false
}

// home returns the shard that Push starts from on the calling goroutine,
// for PushWait. Push keeps its own copy of these lines: the compiler does
// not inline a call of home into Push, and a call level on the push path
// costs what the push does (internal/hotpath's golden listing of Push
// fails with one).
func (s *Sink[T]) home() int {
	if len(s.cpuHomes) > 0 {
		e := s.cpuEntry(machine.CPU())
		i := int(e & firstMask)
		if e > firstMask {
			i += stackHome(int(e >> groupShift))
		}
		return i
	}
	s.mustBeMade()
	return stackHome(len(s.handles))
}

// Dropped returns the number of values dropped so far: pushes refused
// because their ring was full (or closed, once Shutdown has begun) and, under
// DropOldest, values displaced by a push into a full ring. It is the sum of
// the per-shard counters.
func (s *Sink[T]) Dropped() uint64 {
	var total uint64
	for i := range s.shards {
		total += s.droppedOn(i)
	}
	return total
}

// droppedOn returns the drops counted on shard i so far: the sum of its
// reasons' counters (see drops.go).
func (s *Sink[T]) droppedOn(i int) uint64 {
	sh, q := &s.shards[i], &s.waits[i]
	return sh.fullCount() + sh.forBytesCount() + atomic.LoadUint64(&q.waitedOut) +
		atomic.LoadUint64(&q.afterShutdown) + sh.displacedCount() + s.droppedForDiskOn(i)
}

// droppedForDiskOn returns shard i's drops for the spill tier: pushes
// refused while it was full or off, and values it lost.
func (s *Sink[T]) droppedForDiskOn(i int) uint64 {
	if s.spill == nil {
		return 0
	}
	ts := &s.spill.shards[i]
	return atomic.LoadUint64(&ts.refused) + ts.ledger.lost.Load()
}

// logger returns the configured logger, or slog.Default() as it is now.
func (s *Sink[T]) logger() *slog.Logger {
	if s.cfg.logger != nil {
		return s.cfg.logger
	}
	return slog.Default()
}

// panicUnmade is the panic of a method called on a zero Sink or Handle.
func panicUnmade(what string) {
	panic("sink: " + what + " used without New")
}

// mustBeMade panics when s is a zero Sink.
func (s *Sink[T]) mustBeMade() {
	if len(s.shards) == 0 {
		panicUnmade("Sink")
	}
}

// mustHaveCtx panics when a method of s is called with a nil ctx.
func mustHaveCtx(method string, ctx context.Context) {
	if ctx == nil {
		panic("sink: " + method + " called with a nil ctx")
	}
}
