package ring_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/chanring"
	"github.com/shardedsink/shardedsink/ring/mutex"
	"github.com/shardedsink/shardedsink/ring/vyukov"
)

// backends are the rings every benchmark runs over, each through the
// ring.Ring interface as the sink and the channel use them. The zenq
// adapter, a module of its own, runs the same benchmarks in
// ring/zenq/bench_test.go.
//
// Compare them with
//
//	go test -run '^$' -bench . -count=10 ./ring/ > ring.txt
//	go run golang.org/x/perf/cmd/benchstat@latest ring.txt
var backends = []backend{
	{"vyukov", vyukov.Factory[int]},
	{"mutex", mutex.Factory[int]},
	{"chanring", chanring.Factory[int]},
}

// backend is a ring implementation under benchmark.
type backend struct {
	name    string
	factory ring.Factory[int]
}

// benchCapacity is the capacity of the rings in the benchmarks: big enough
// that producers and consumers rarely meet a full or empty ring.
const benchCapacity = 1024

// BenchmarkTryPushTryPop measures one TryPush and one TryPop on a ring that
// no other goroutine touches: the cost of the atomics or the lock without
// contention.
func BenchmarkTryPushTryPop(b *testing.B) {
	for _, bk := range backends {
		b.Run(bk.name, func(b *testing.B) {
			r := bk.factory(benchCapacity)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if !r.TryPush(i) {
					b.Fatal("TryPush failed on an empty ring")
				}
				if _, ok := r.TryPop(); !ok {
					b.Fatal("TryPop failed on a ring holding a value")
				}
			}
		})
	}
}

// BenchmarkTryPushFull measures a TryPush that fails because the ring is
// full: what a sink pays for each value it drops.
func BenchmarkTryPushFull(b *testing.B) {
	for _, bk := range backends {
		b.Run(bk.name, func(b *testing.B) {
			r := bk.factory(benchCapacity)
			for r.TryPush(0) {
			}
			b.ReportAllocs()
			for b.Loop() {
				if r.TryPush(1) {
					b.Fatal("TryPush succeeded on a full ring")
				}
			}
		})
	}
}

// BenchmarkTryPopEmpty measures a TryPop that fails because the ring is
// empty: what an idle consumer pays for each poll.
func BenchmarkTryPopEmpty(b *testing.B) {
	for _, bk := range backends {
		b.Run(bk.name, func(b *testing.B) {
			r := bk.factory(benchCapacity)
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := r.TryPop(); ok {
					b.Fatal("TryPop succeeded on an empty ring")
				}
			}
		})
	}
}

// BenchmarkProducersConsumers moves b.N values through one ring from n
// producer goroutines to n consumer goroutines, for n = 1, 2 and 4: each
// producer pushes its share of b.N and each consumer pops its share, retrying
// (after runtime.Gosched) on full and empty. The total is b.N whatever n is,
// so ns/op is the wall time per value moved and items/s the throughput.
func BenchmarkProducersConsumers(b *testing.B) {
	for _, bk := range backends {
		for _, n := range []int{1, 2, 4} {
			b.Run(fmt.Sprintf("%s/%dx%d", bk.name, n, n), func(b *testing.B) {
				r := bk.factory(benchCapacity)
				b.ReportAllocs()
				b.ResetTimer()
				var wg sync.WaitGroup
				for i := range n {
					share := b.N / n
					if i < b.N%n {
						share++
					}
					wg.Go(func() {
						for v := range share {
							for !r.TryPush(v) {
								runtime.Gosched()
							}
						}
					})
					wg.Go(func() {
						for range share {
							for {
								if _, ok := r.TryPop(); ok {
									break
								}
								runtime.Gosched()
							}
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "items/s")
			})
		}
	}
}
