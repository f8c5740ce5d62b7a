package sink

import (
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

// benchEvent is the original harness's TelemetryEvent: a 32-byte record.
type benchEvent struct {
	requestID [2]uint64
	timestamp uint64
	route     uint32
	status    uint16
	flags     uint16
}

// pushImpl is one way of pushing, as one row of the contended benchmark.
// setup runs once per producer and returns its push function; cfg, when set,
// adjusts the sink's configuration.
type pushImpl struct {
	name  string
	cfg   func(*Config[benchEvent])
	setup func(s *Sink[benchEvent]) func(benchEvent) bool
}

func handlePush(s *Sink[benchEvent]) func(benchEvent) bool { return s.Handle().Push }
func sinkPush(s *Sink[benchEvent]) func(benchEvent) bool   { return s.Push }
func pollMode(c *Config[benchEvent])                       { c.Idle = IdlePoll }

var pushImpls = []pushImpl{
	{name: "Handle.Push", setup: handlePush},
	{name: "Sink.Push", setup: sinkPush},
}

// designImpls are the alternatives measured for the design; not part of the
// API.
var designImpls = []pushImpl{
	// IdlePoll with the push path of the default (the flag load)...
	{name: "poll/Handle.Push", cfg: pollMode, setup: handlePush},
	// ...and with the original's push path: no flag load at all.
	{name: "poll/Handle.Push-without-flag-load", cfg: pollMode, setup: func(s *Sink[benchEvent]) func(benchEvent) bool {
		return s.Handle().pushWithoutFlag
	}},
	// ...and the same without the load but not inlined either, like
	// Handle.Push: the difference to the row above is the call, the
	// difference to poll/Handle.Push is the load itself.
	{name: "poll/Handle.Push-without-flag-load-noinline", cfg: pollMode, setup: func(s *Sink[benchEvent]) func(benchEvent) bool {
		return s.Handle().pushWithoutFlagNoinline
	}},
	// Handle-less: a per-P round-robin cursor (the original's default
	// ThreadLocalRoundRobin): a pool of handles, each push puts back the
	// next shard's.
	{name: "Sink.Push-per-P-round-robin", setup: func(s *Sink[benchEvent]) func(benchEvent) bool {
		return roundRobinPool(s)
	}},
	// Handle-less: a random shard per push from math/rand/v2 (per-thread
	// ChaCha8 state in the runtime, no shared write).
	{name: "Sink.Push-math-rand", setup: func(s *Sink[benchEvent]) func(benchEvent) bool {
		n := uint32(len(s.shards))
		return func(v benchEvent) bool { return s.handles[rand.Uint32N(n)].Push(v) }
	}},
}

// pushWithoutFlag is Handle.Push as the original has it: no load of the
// sleeping flag.
func (h *Handle[T]) pushWithoutFlag(v T) bool {
	if h.sh.ring.TryPush(v) {
		return true
	}
	h.sh.countDrop()
	return false
}

// pushWithoutFlagNoinline is pushWithoutFlag as a real call.
//
//go:noinline
func (h *Handle[T]) pushWithoutFlagNoinline(v T) bool {
	if h.sh.ring.TryPush(v) {
		return true
	}
	h.sh.countDrop()
	return false
}

// rrPools holds the per-P round-robin alternative's pool for each sink.
var rrPools sync.Map // *Sink -> func(benchEvent) bool

func roundRobinPool(s *Sink[benchEvent]) func(benchEvent) bool {
	if f, ok := rrPools.Load(s); ok {
		return f.(func(benchEvent) bool)
	}
	p := &sync.Pool{New: func() any { return s.Handle() }}
	f := func(v benchEvent) bool {
		h := p.Get().(*Handle[benchEvent])
		ok := h.Push(v)
		p.Put(h.next)
		return ok
	}
	actual, _ := rrPools.LoadOrStore(s, f)
	return actual.(func(benchEvent) bool)
}

const (
	benchShards   = 4       // as in the original harness
	benchTrialMax = 1 << 18 // pushes per trial, all producers together
)

// BenchmarkContended is the original's accept-path harness as a go test
// benchmark: P producer goroutines, each on its own locked OS thread, push
// into a 4-shard sink whose rings hold a whole trial, so that every push is
// accepted (drop-% reports it). Each producer reads its thread's CPU clock
// before and after its loop; cpu-ns/op is the CPU time of all producers
// divided by their pushes. ns/op is wall-clock time and, with 256 threads on
// two cores, mostly measures waiting for a core.
//
// drain=held holds every worker in its Drain call while the producers push,
// so the numbers are the push path alone. drain=live lets the workers drain
// as they do in use; then each push also pays for the cache lines it shares
// with the worker that pops right behind it, which depends on how the OS
// schedules the worker threads and varies from run to run.
//
//	go test -run '^$' -bench Contended -benchtime 2000000x -count 10 ./sink/ | tee new.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl new.txt
func BenchmarkContended(b *testing.B) {
	benchImpls(b, "drain=held", true, pushImpls)
	benchImpls(b, "drain=live", false, pushImpls)
}

// BenchmarkPushDesignAlternatives runs the contended harness, workers held,
// over the alternatives that the design was chosen against: IdlePoll with and
// without the flag load on the push path, and two other handle-less shard
// choices.
//
//	go test -run '^$' -bench PushDesign -benchtime 2000000x -count 10 ./sink/ | tee alt.txt
func BenchmarkPushDesignAlternatives(b *testing.B) {
	benchImpls(b, "drain=held", true, designImpls)
}

func benchImpls(b *testing.B, name string, held bool, impls []pushImpl) {
	b.Run(name, func(b *testing.B) {
		for _, impl := range impls {
			for _, producers := range []int{1, 4, 16, 64, 256} {
				b.Run(fmt.Sprintf("impl=%s/producers=%d", impl.name, producers), func(b *testing.B) {
					benchContended(b, impl, producers, held)
				})
			}
		}
	})
}

func benchContended(b *testing.B, impl pushImpl, producers int, held bool) {
	if _, err := cputime.Thread(); err != nil {
		b.Skip(err)
	}
	cfg := Config[benchEvent]{
		Shards:           benchShards,
		RingCapacity:     benchTrialMax + 1024, // a whole trial fits in any one shard
		OverloadInterval: time.Hour,
		Ring:             prefaulted,
	}
	if impl.cfg != nil {
		impl.cfg(&cfg)
	}
	// hold, while set, is a channel that every Drain call waits on.
	var hold atomic.Pointer[chan struct{}]
	s := MustNew(cfg, ActionFunc[benchEvent](func(context.Context, []benchEvent) {
		if c := hold.Load(); c != nil {
			<-*c
		}
	}))
	defer func() { _ = s.Shutdown(context.Background()) }()

	var cpu time.Duration
	var pushed, accepted int64
	b.ReportAllocs()
	b.ResetTimer()
	for left := b.N; left > 0; {
		trial := min(left, benchTrialMax)
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
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(pushed), "cpu-ns/op")
	b.ReportMetric(100*float64(pushed-accepted)/float64(pushed), "drop-%")
}

// prefaulted is vyukov.Factory with every slot written once, so that the
// page faults of a fresh ring are not counted in the producers' CPU time.
func prefaulted(capacity int) ring.Ring[benchEvent] {
	r := vyukov.New[benchEvent](capacity)
	for r.TryPush(benchEvent{}) {
	}
	for {
		if _, ok := r.TryPop(); !ok {
			return r
		}
	}
}

// contendedTrial runs one burst of about total pushes over the producers and
// returns their CPU time, pushes and accepted pushes.
func contendedTrial(b *testing.B, s *Sink[benchEvent], impl pushImpl, producers, total int) (time.Duration, int64, int64) {
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
			ev := benchEvent{requestID: [2]uint64{uint64(p), 0}, timestamp: 1, route: 7, status: 200, flags: 1}
			ready.Done()
			<-start
			t0, err := cputime.Thread()
			if err != nil {
				errs[p] = err
				return
			}
			var n int64
			for i := range per {
				ev.requestID[1] = uint64(i)
				if push(ev) {
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
