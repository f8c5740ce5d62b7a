//go:build zenq

package zenq_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/shardedsink/shardedsink/ring/zenq"
)

// The benchmarks of ring/ring_bench_test.go, over the zenq adapter, under the
// same names (sub-benchmark zenq), so that the two outputs read side by side
// with benchstat. The adapter is a module of its own, so they live here
// rather than in package ring's tests:
//
//	go test -run '^$' -bench . -count=10 ./ring/ > ring.txt
//	go test -tags zenq -ldflags=-checklinkname=0 -run '^$' -bench . -count=10 ./ring/zenq/ >> ring.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col .fullname ring.txt

// benchCapacity is the capacity of the rings in the benchmarks, as in
// package ring's.
const benchCapacity = 1024

func BenchmarkTryPushTryPop(b *testing.B) {
	b.Run("zenq", func(b *testing.B) {
		needZenq(b)
		r := zenq.Factory[int](benchCapacity)
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

func BenchmarkTryPushFull(b *testing.B) {
	b.Run("zenq", func(b *testing.B) {
		needZenq(b)
		r := zenq.Factory[int](benchCapacity)
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

func BenchmarkTryPopEmpty(b *testing.B) {
	b.Run("zenq", func(b *testing.B) {
		needZenq(b)
		r := zenq.Factory[int](benchCapacity)
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := r.TryPop(); ok {
				b.Fatal("TryPop succeeded on an empty ring")
			}
		}
	})
}

func BenchmarkProducersConsumers(b *testing.B) {
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("zenq/%dx%d", n, n), func(b *testing.B) {
			needZenq(b)
			r := zenq.Factory[int](benchCapacity)
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
