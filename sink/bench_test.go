package sink

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardedsink/shardedsink/internal/cputime"
	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/vyukov"
)

// benchEvent is a 32-byte value, the size of the original harness's
// TelemetryEvent (two request-id words, a timestamp, route, status, flags).
type benchEvent [4]uint64

// pushImpl is one way of pushing, as one row of the contended benchmark.
// setup runs once per producer and returns its push function; cfg, when set,
// adjusts the sink's configuration.
type pushImpl[T any] struct {
	name  string
	cfg   func(*Config[T])
	exp   experiments // design alternatives (see experiments)
	setup func(s *Sink[T]) func(T) bool
	// stackHomes builds the sink with stack homes for Sink.Push (and their
	// default shard count), as on a platform without a cheap CPU number.
	stackHomes bool
}

func handlePush[T any](s *Sink[T]) func(T) bool { return s.Handle().Push }
func sinkPush[T any](s *Sink[T]) func(T) bool   { return s.Push }
func pollMode[T any](c *Config[T])              { c.Idle = IdlePoll }

func pushImpls[T any]() []pushImpl[T] {
	return []pushImpl[T]{
		{name: "Handle.Push", setup: handlePush[T]},
		{name: "Sink.Push", setup: sinkPush[T]},
		// The fallback where the CPU number is not readable, measured on
		// the same machine (the same as Sink.Push where it is not).
		{name: "Sink.Push(stack-homes)", setup: sinkPush[T], stackHomes: true},
	}
}

// dropOldestImpls are the two pushes under DropOldest. The rings of the
// contended benchmark hold a whole trial, so these rows measure the accept
// path, which is the same code as DropNewest's: the ForcePush is taken only
// by a push that finds its ring full.
func dropOldestImpls[T any]() []pushImpl[T] {
	dropOldest := func(c *Config[T]) { c.Overflow = DropOldest }
	return []pushImpl[T]{
		{name: "Handle.Push(DropOldest)", cfg: dropOldest, setup: handlePush[T]},
		{name: "Sink.Push(DropOldest)", cfg: dropOldest, setup: sinkPush[T]},
	}
}

// designImpls are the alternatives measured for the design; not part of the
// API. "shards=P" rows use GOMAXPROCS shards; the others the default
// (DefaultShards), which differs between CPU and stack homes.
func designImpls[T any]() []pushImpl[T] {
	perP := func(k int) func(*Config[T]) {
		return func(c *Config[T]) { c.Shards = k * runtime.GOMAXPROCS(0) }
	}
	return []pushImpl[T]{
		// The handle-less push as shipped: a home from the CPU where it
		// can be read (a ring per CPU), else from the stack...
		{name: "Sink.Push", setup: sinkPush[T]},
		// ...the stack home on this machine, over its default of 4 × P
		// shards and over GOMAXPROCS shards.
		{name: "Sink.Push(stack-homes)", setup: sinkPush[T], stackHomes: true},
		{name: "Sink.Push(stack-homes,shards=P)", cfg: perP(1), setup: sinkPush[T], stackHomes: true},
		// The previous design: a home handle per P cached in a sync.Pool
		// (Get, push, Put), over GOMAXPROCS shards as it shipped, and over
		// 4 × P.
		{name: "Sink.Push-pool-per-P(shards=P)", cfg: perP(1), setup: poolHomePush[T]},
		{name: "Sink.Push-pool-per-P", setup: poolHomePush[T]},
		// A per-P round-robin cursor (the original's default
		// ThreadLocalRoundRobin): a pool of handles, each push puts back the
		// next shard's.
		{name: "Sink.Push-per-P-round-robin", setup: roundRobinPool[T]},
		// A random shard per push from math/rand/v2 (per-thread ChaCha8
		// state in the runtime, no shared write).
		{name: "Sink.Push-math-rand", setup: func(s *Sink[T]) func(T) bool {
			n := uint32(len(s.shards))
			return func(v T) bool { return s.handles[rand.Uint32N(n)].Push(v) }
		}},
		// Handles taken round-robin over 4 × P shards (the default), over
		// P and over 2 × P.
		{name: "Handle.Push", setup: handlePush[T]},
		{name: "Handle.Push(shards=P)", cfg: perP(1), setup: handlePush[T]},
		{name: "Handle.Push(shards=2xP)", cfg: perP(2), setup: handlePush[T]},
		// The original's push path: no load of the sleeping flag (IdlePoll,
		// which needs no doorbell).
		{name: "Handle.Push-without-flag-load(IdlePoll)", cfg: pollMode[T], setup: func(s *Sink[T]) func(T) bool {
			return s.Handle().pushWithoutFlag
		}},
	}
}

// pushWithoutFlag is Handle.Push as the original has it: no load of the
// sleeping flag.
func (h *Handle[T]) pushWithoutFlag(v T) bool {
	if h.sh.ring.TryPush(v) {
		return true
	}
	h.sh.countFull()
	return false
}

// poolHomePush returns the handle-less push of earlier versions for s: a
// home handle per P cached in a sync.Pool (one Get and one Put per push),
// moving on to the next shard when the home ring is full. The pool is
// made once per sink and captured, so the push pays no lookup.
func poolHomePush[T any](s *Sink[T]) func(T) bool {
	p, _ := pools.LoadOrStore(s, &sync.Pool{New: func() any { return s.Handle() }})
	pool := p.(*sync.Pool)
	return func(v T) bool {
		h := pool.Get().(*Handle[T])
		if h.Push(v) {
			pool.Put(h)
			return true
		}
		pool.Put(h.next)
		return false
	}
}

// pools holds poolHomePush's pool for each sink.
var pools sync.Map // *Sink[T] -> *sync.Pool

// rrPools holds the per-P round-robin alternative's pool for each sink.
var rrPools sync.Map // *Sink -> func(T) bool

func roundRobinPool[T any](s *Sink[T]) func(T) bool {
	if f, ok := rrPools.Load(s); ok {
		return f.(func(T) bool)
	}
	p := &sync.Pool{New: func() any { return s.Handle() }}
	f := func(v T) bool {
		h := p.Get().(*Handle[T])
		ok := h.Push(v)
		p.Put(h.next)
		return ok
	}
	actual, _ := rrPools.LoadOrStore(s, f)
	return actual.(func(T) bool)
}

const (
	// benchTrialMin is the fewest pushes in one trial, all producers
	// together, and benchPerProducer the fewest per producer: each
	// producer reads its thread's CPU clock twice per trial (a system
	// call of about 0.8 µs in all), which must stay small against its
	// pushes (0.4 ns per push at 2048).
	benchTrialMin    = 1 << 16
	benchPerProducer = 2048
	// benchMaxTrial is the largest trial, at the most producers.
	benchMaxTrial = benchPerProducer * 256
)

// benchRingCapacity holds a whole trial of one producer (whose pushes all go
// to one ring) and twice the share of the largest trial that one of shards
// rings receives on average (homes are not exactly even).
func benchRingCapacity(shards int) int {
	return min(2*benchMaxTrial/shards, benchMaxTrial) + 1024
}

var benchProducers = []int{1, 4, 16, 64, 256}

// BenchmarkContended is the original's accept-path harness as a go test
// benchmark: P producer goroutines, each on its own locked OS thread, push
// 8-byte or 32-byte values into a sink with the default shard count
// (DefaultShards) whose rings hold a whole trial, so that every push is
// accepted (drop-% reports it). Each producer reads its
// thread's CPU clock before and after its loop; cpu-ns/op is the CPU time of
// all producers divided by their accepted pushes. ns/op is wall-clock time
// and, with 256 threads on two cores, mostly measures waiting for a core.
//
// consumers=held holds every worker in its Drain call while the producers
// push, so the numbers are the push path alone. consumers=draining lets the
// workers drain as they do in use; then each push also pays for the cache
// lines it shares with the worker that pops behind it.
//
//	go test -run '^$' -bench Contended -benchtime 2000000x -count 10 ./sink/ | tee new.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl -filter '.unit:cpu-ns/op' new.txt
func BenchmarkContended(b *testing.B) {
	for _, held := range []bool{true, false} {
		b.Run(consumersName(held), func(b *testing.B) {
			benchImpls(b, held, "payload=8", append(pushImpls[uint64](), dropOldestImpls[uint64]()...))
			benchImpls(b, held, "payload=32", pushImpls[benchEvent]())
		})
	}
}

// BenchmarkPushDesignAlternatives runs the contended harness over the
// alternatives that the push path was chosen against (see designImpls), with
// 8-byte values.
//
//	go test -run '^$' -bench PushDesign -benchtime 2000000x -count 10 ./sink/ | tee alt.txt
func BenchmarkPushDesignAlternatives(b *testing.B) {
	for _, held := range []bool{true, false} {
		b.Run(consumersName(held), func(b *testing.B) {
			benchImpls(b, held, "payload=8", designImpls[uint64]())
		})
	}
}

// budgetImpls are the pushes with a byte budget (Config.MaxQueuedBytes),
// next to the same pushes without one, and the alternative of one counter
// for the whole sink instead of one per shard. SizeOf says 8 bytes a value;
// the budget holds a whole trial, so that every push is accepted and the
// rows measure the accept path: the SizeOf call and the add on the byte
// counter.
func budgetImpls() []pushImpl[uint64] {
	budget := func(c *Config[uint64]) {
		c.SizeOf = func(uint64) int { return 8 }
		c.MaxQueuedBytes = 8 * 2 * benchMaxTrial * cmp.Or(c.Shards, DefaultShards())
	}
	shared := experiments{sharedBudget: true}
	return []pushImpl[uint64]{
		{name: "Handle.Push", setup: handlePush[uint64]},
		{name: "Handle.Push(MaxQueuedBytes)", cfg: budget, setup: handlePush[uint64]},
		{name: "Handle.Push(MaxQueuedBytes,shared-counter)", cfg: budget, exp: shared, setup: handlePush[uint64]},
		{name: "Sink.Push", setup: sinkPush[uint64]},
		{name: "Sink.Push(MaxQueuedBytes)", cfg: budget, setup: sinkPush[uint64]},
		{name: "Sink.Push(MaxQueuedBytes,shared-counter)", cfg: budget, exp: shared, setup: sinkPush[uint64]},
	}
}

// BenchmarkBudget runs the contended harness over budgetImpls, 8-byte
// values: what a byte budget costs a push, per shard (as shipped) and with
// one shared counter.
//
//	go test -run '^$' -bench Budget -benchtime 2000000x -count 10 ./sink/ | tee budget.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl -filter '.unit:cpu-ns/op' budget.txt
func BenchmarkBudget(b *testing.B) {
	for _, held := range []bool{true, false} {
		b.Run(consumersName(held), func(b *testing.B) {
			benchImpls(b, held, "payload=8", budgetImpls())
		})
	}
}

func consumersName(held bool) string {
	if held {
		return "consumers=held"
	}
	return "consumers=draining"
}

func benchImpls[T any](b *testing.B, held bool, payload string, impls []pushImpl[T]) {
	b.Run(payload, func(b *testing.B) {
		for _, impl := range impls {
			for _, producers := range benchProducers {
				b.Run(fmt.Sprintf("impl=%s/producers=%d", impl.name, producers), func(b *testing.B) {
					benchContended(b, impl, producers, held)
				})
			}
		}
	})
}

func benchContended[T any](b *testing.B, impl pushImpl[T], producers int, held bool) {
	if _, err := cputime.Thread(); err != nil {
		b.Skip(err)
	}
	if impl.stackHomes {
		old := homesFromCPU
		homesFromCPU = func() bool { return false }
		defer func() { homesFromCPU = old }()
	}
	cfg := Config[T]{
		OverloadInterval: time.Hour,
		OnOverload:       func(Overload) {}, // drop-% reports drops; keep the output clean
		Ring:             prefaulted[T],
	}
	if impl.cfg != nil {
		impl.cfg(&cfg)
	}
	cfg.RingCapacity = benchRingCapacity(cmp.Or(cfg.Shards, DefaultShards()))
	// hold, while set, is a channel that every Drain call waits on.
	var hold atomic.Pointer[chan struct{}]
	s, err := newTuned(cfg, ActionFunc[T](func(context.Context, []T) {
		if c := hold.Load(); c != nil {
			<-*c
		}
	}), impl.exp, false)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Shutdown(context.Background()) }()

	var cpu time.Duration
	var pushed, accepted int64
	b.ReportAllocs()
	b.ResetTimer()
	for left := b.N; left > 0; {
		trial := min(left, max(benchTrialMin, benchPerProducer*producers))
		left -= trial
		c := make(chan struct{})
		if held {
			hold.Store(&c)
		}
		cp, p, a := contendedTrial(b, s, impl, producers, trial)
		cpu += cp
		pushed += p
		accepted += a
		b.StopTimer()
		hold.Store(nil)
		close(c)
		if err := s.Flush(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(max(accepted, 1)), "cpu-ns/op")
	b.ReportMetric(100*float64(pushed-accepted)/float64(pushed), "drop-%")
}

// prefaulted is vyukov.Factory with every slot written once, so that the
// page faults of a fresh ring are not counted in the producers' CPU time.
func prefaulted[T any](capacity int) ring.Ring[T] {
	r := vyukov.New[T](capacity)
	var zero T
	for r.TryPush(zero) {
	}
	for {
		if _, ok := r.TryPop(); !ok {
			return r
		}
	}
}

// contendedTrial runs one burst of about total pushes over the producers and
// returns their CPU time, pushes and accepted pushes.
func contendedTrial[T any](b *testing.B, s *Sink[T], impl pushImpl[T], producers, total int) (time.Duration, int64, int64) {
	per := max(total/producers, 1)
	start := make(chan struct{})
	var wg sync.WaitGroup
	cpus := make([]time.Duration, producers)
	acc := make([]int64, producers)
	errs := make([]error, producers)
	var ready sync.WaitGroup
	ready.Add(producers)
	for p := range producers {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			push := impl.setup(s)
			var v T
			ready.Done()
			<-start
			t0, err := cputime.Thread()
			if err != nil {
				errs[p] = err
				return
			}
			var n int64
			for range per {
				if push(v) {
					n++
				}
			}
			t1, err := cputime.Thread()
			cpus[p], acc[p], errs[p] = t1-t0, n, err
		})
	}
	ready.Wait()
	close(start)
	wg.Wait()
	var cpu time.Duration
	var accepted int64
	for p := range producers {
		if errs[p] != nil {
			b.Fatal(errs[p])
		}
		cpu += cpus[p]
		accepted += acc[p]
	}
	return cpu, int64(per * producers), accepted
}
