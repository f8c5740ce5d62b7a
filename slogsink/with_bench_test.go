package slogsink_test

import (
	"fmt"
	"log/slog"
	"testing"
)

// BenchmarkWith measures what a logger made per request costs: With of two
// attributes on a logger that already has one, then n Info calls of four
// attributes each, from one goroutine into a file, the synchronous JSON
// handler against slogsink. At n=0 it is the With alone. cpu-ns/op is the
// logging goroutine's thread CPU per op (see BenchmarkInfoOnAChain).
//
//	go test -run '^$' -bench With -count 5 ./slogsink/
func BenchmarkWith(b *testing.B) {
	for _, n := range []int{0, 1, 8, 32} {
		for _, kind := range []string{"sync", "slogsink"} {
			b.Run(fmt.Sprintf("records=%d/handler=%s", n, kind), func(b *testing.B) {
				w := benchWriter(b, "file")
				bh := newBenchHandler(b, kind, 0, w)
				base := slog.New(bh.h).With("service", "checkout")
				b.ReportAllocs()
				report := threadCPU(b)
				i := 0
				for b.Loop() {
					i++
					lg := base.With("request", i, "route", "/cart")
					for k := range n {
						lg.Info("step", "step", k, "status", 200, "bytes", 1234, "user", "ann")
					}
				}
				b.StopTimer()
				report()
				if bh.close != nil {
					bh.close()
				}
				b.ReportMetric(100*float64(bh.dropped())/float64(max(1, n*b.N)), "%dropped")
			})
		}
	}
}
