package sink_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardedsink/shardedsink/sink"
)

// The hand-off matrix (docs/benchmarks.md, "What a push waits for";
// bash sink/testdata/handoff.sh takes it): what a push waits for when the
// destination is slow, on an idle machine and with two goroutines keeping
// both cores busy, with the hand-off on (default) and off side by side.
// The shape of issue 62's user program: Shards 2, RingCapacity 1024,
// BatchSize 256, 8 producers each with its own Handle, offering twice
// what the Drain takes for 1 s.

// slowDrains are the Drain behaviours of the matrix: a per-call time
// spent sleeping (a network call: off the CPU) or spinning (work that
// competes for the CPU), and a 1 s stall in a Drain that otherwise keeps
// up.
var slowDrains = []struct {
	name  string
	per   time.Duration
	spin  bool
	stall bool
}{
	{"sleep=0.5ms", 500 * time.Microsecond, false, false},
	{"sleep=2ms", 2 * time.Millisecond, false, false},
	{"sleep=5ms", 5 * time.Millisecond, false, false},
	{"sleep=9ms", 9 * time.Millisecond, false, false},
	{"sleep=20ms", 20 * time.Millisecond, false, false},
	{"spin=2ms", 2 * time.Millisecond, true, false},
	{"spin=5ms", 5 * time.Millisecond, true, false},
	{"stall=1s", 500 * time.Microsecond, false, true},
}

func BenchmarkSlowDestination(b *testing.B) {
	for _, d := range slowDrains {
		for _, load := range []string{"idle", "busy"} {
			for _, handOff := range []string{"on", "off"} {
				b.Run(fmt.Sprintf("drain=%s/cores=%s/handoff=%s", d.name, load, handOff), func(b *testing.B) {
					for range b.N {
						r := runSlowDestination(d.per, d.spin, d.stall, load == "busy", handOff == "off")
						b.ReportMetric(float64(r.p50), "p50-push-ns")
						b.ReportMetric(float64(r.p999), "p999-push-ns")
						b.ReportMetric(float64(r.max), "max-push-ns")
						b.ReportMetric(r.shedPct, "shed-%")
						b.ReportMetric(float64(r.handOffs), "handoffs")
						b.ReportMetric(float64(r.pushes), "pushes")
					}
				})
			}
		}
	}
}

type slowDestResult struct {
	p50, p999, max time.Duration
	shedPct        float64
	handOffs       uint64
	pushes         int
}

// runSlowDestination runs one cell of the matrix: 8 paced producers for
// 1 s (2 s with the stall, which begins 200 ms in) into a sink whose
// Drain takes per a call, and the latencies of every push.
func runSlowDestination(per time.Duration, spin, stall, busy, noHandOff bool) slowDestResult {
	const shards, ringCap, batch, producers = 2, 1024, 256, 8
	run := time.Second
	// Offered: twice what the Drain takes; with the stall, half of what
	// it takes between stalls, so that only the stall sheds.
	rate := 2 * float64(shards*batch) / per.Seconds()
	if stall {
		run, rate = 2*time.Second, rate/4
	}
	var stallOnce atomic.Bool
	began := time.Now()
	s, err := sink.New(sink.Config[int]{
		Shards: shards, RingCapacity: ringCap, BatchSize: batch,
		DisableHandOff: noHandOff, Logger: quiet,
	}, sink.ActionFunc[int](func(_ context.Context, _ []int) {
		if stall && time.Since(began) > 200*time.Millisecond && stallOnce.CompareAndSwap(false, true) {
			time.Sleep(time.Second)
			return
		}
		if spin {
			for t0 := time.Now(); time.Since(t0) < per; {
			}
			return
		}
		time.Sleep(per)
	}))
	if err != nil {
		panic(err)
	}
	var stop atomic.Bool
	var busyWG sync.WaitGroup
	if busy {
		for range 2 {
			busyWG.Go(func() {
				for !stop.Load() {
				}
			})
		}
	}
	lat := make([][]time.Duration, producers)
	var wg sync.WaitGroup
	start := time.Now()
	for p := range producers {
		wg.Go(func() {
			h := s.Handle()
			each := rate / producers
			mine := make([]time.Duration, 0, int(each*run.Seconds())+1024)
			for n := 0; ; {
				el := time.Since(start)
				if el >= run {
					break
				}
				for due := int(el.Seconds() * each); n < due; n++ {
					t0 := time.Now()
					h.Push(n)
					mine = append(mine, time.Since(t0))
				}
				time.Sleep(50 * time.Microsecond)
			}
			lat[p] = mine
		})
	}
	wg.Wait()
	stop.Store(true)
	busyWG.Wait()
	if err := s.Shutdown(context.Background()); err != nil {
		panic(err)
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	st := s.Stats()
	runtime.GC()
	r := slowDestResult{handOffs: st.HandOffs, pushes: len(all)}
	if len(all) > 0 {
		r.p50, r.p999, r.max = all[len(all)/2], all[len(all)*999/1000], all[len(all)-1]
		r.shedPct = 100 * float64(st.Dropped) / float64(len(all))
	}
	return r
}

// BenchmarkStarved is the starved row of the hand-off matrix: 256
// producers, each on a locked OS thread, push 2,000 values each as fast
// as they can into a default sink whose Drain returns at once: the load
// in which the workers get too little CPU, where the hand-off parks.
func BenchmarkStarved(b *testing.B) {
	for _, handOff := range []string{"on", "off"} {
		b.Run("producers=256/handoff="+handOff, func(b *testing.B) {
			for range b.N {
				st, longest := starve(b, sink.Config[int]{DisableHandOff: handOff == "off"}, 256, 2000)
				b.ReportMetric(float64(st.Dropped), "refused")
				b.ReportMetric(float64(longest), "max-push-ns")
				b.ReportMetric(float64(st.HandOffs), "handoffs")
			}
		})
	}
}
