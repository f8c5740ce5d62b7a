package promsink_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardedsink/shardedsink/promsink"
	"github.com/shardedsink/shardedsink/sink"
)

// benchSink is a sink of 64 shards whose workers drop nothing on the floor
// but do nothing with a batch.
func benchSink(b *testing.B, shards int) *sink.Sink[int] {
	s := sink.MustNew(sink.Config[int]{Name: "bench", Shards: shards, RingCapacity: 16384,
		Logger: slog.New(slog.DiscardHandler)}, sink.ActionFunc[int](func(context.Context, []int) {}))
	b.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s
}

// BenchmarkCollect is a scrape's cost in the collector: Collect of a sink
// of 64 shards, its Stats call included, the metrics taken off the
// channel (not encoded: that is the registry's, BenchmarkGather).
func BenchmarkCollect(b *testing.B) {
	for _, per := range []bool{false, true} {
		b.Run(fmt.Sprintf("shards=64/per-shard=%t", per), func(b *testing.B) {
			var opts []promsink.Option
			if per {
				opts = append(opts, promsink.WithPerShard())
			}
			c := promsink.NewSinkCollector(benchSink(b, 64), opts...)
			// Room for every metric of one Collect (8 + 64 x 17 per
			// shard), which the loop drains only after it returns.
			ch := make(chan prometheus.Metric, 4096)
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				c.Collect(ch)
				n = len(ch)
				for len(ch) > 0 {
					<-ch
				}
			}
			b.ReportMetric(float64(n), "metrics/op")
		})
	}
}

// BenchmarkGather is a whole scrape but the HTTP: the registry's Gather of
// the one collector (Collect, Write of each metric, sorting, checks).
func BenchmarkGather(b *testing.B) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(promsink.NewSinkCollector(benchSink(b, 64)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStats is a snapshot of a sink of 64 shards alone: sink.Stats,
// which allocates its PerShard slice, and sink.ReadStats into a Stats kept
// from one call to the next, as the collectors read it.
func BenchmarkStats(b *testing.B) {
	s := benchSink(b, 64)
	b.Run("call=Stats", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = s.Stats()
		}
	})
	b.Run("call=ReadStats", func(b *testing.B) {
		var st sink.Stats
		b.ReportAllocs()
		for b.Loop() {
			s.ReadStats(&st)
		}
	})
}

// BenchmarkPushWhileScraped is the cost of a push from 64 producers (each
// with its Handle, b.N pushes in all) into a sink of 64 shards, with no
// collector (scrape=none) or with one gathered every 100 ms by its
// registry (scrape=100ms): the scrape reads Stats and adds nothing to the
// push path, so the two should agree within the noise. Run it for a time
// (-benchtime=1s), not a count, so that scrapes happen; with a no-op
// Drain on few cores most pushes find their ring full, so this is the
// cost of the pushes a loaded sink sees, drops included (drop-%).
func BenchmarkPushWhileScraped(b *testing.B) {
	const producers = 64
	for _, every := range []time.Duration{0, 100 * time.Millisecond} {
		name := "scrape=none"
		if every > 0 {
			name = "scrape=" + every.String()
		}
		b.Run(name, func(b *testing.B) {
			s := benchSink(b, 64)
			stop := make(chan struct{})
			var scraper sync.WaitGroup
			var scrapes atomic.Int64
			if every > 0 {
				reg := prometheus.NewRegistry()
				reg.MustRegister(promsink.NewSinkCollector(s))
				scraper.Go(func() {
					t := time.NewTicker(every)
					defer t.Stop()
					for {
						select {
						case <-stop:
							return
						case <-t.C:
							if _, err := reg.Gather(); err != nil {
								panic(err)
							}
							scrapes.Add(1)
						}
					}
				})
			}
			handles := make([]*sink.Handle[int], producers)
			for i := range handles {
				handles[i] = s.Handle()
			}
			before := s.Dropped()
			b.ResetTimer()
			var wg sync.WaitGroup
			for p := range producers {
				n := b.N / producers
				if p < b.N%producers {
					n++
				}
				wg.Go(func() {
					h := handles[p]
					for i := range n {
						h.Push(i)
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			close(stop)
			scraper.Wait()
			b.ReportMetric(100*float64(s.Dropped()-before)/float64(b.N), "drop-%")
			b.ReportMetric(float64(scrapes.Load()), "scrapes")
		})
	}
}
