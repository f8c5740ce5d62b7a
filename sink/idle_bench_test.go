//go:build unix

package sink

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardedsink/shardedsink/internal/cputime"
)

// BenchmarkIdle measures the three idle strategies the design was chosen
// from, IdleWake, IdlePoll and the adaptive backoff that is not offered, on
// 2 and 8 shards: the process CPU time over one second of an idle sink as a
// percentage of one core (idle-cpu-%), and the median time until Drain sees a
// value pushed into the idle sink, when the pushing goroutine blocks at once
// (pickup-block-µs) and when it keeps its P busy (pickup-busy-µs). One
// iteration is one whole measurement (about 2 s), so b.Loop runs it once
// unless -benchtime asks for more; the metrics are the means over the
// iterations:
//
//	go test -run '^$' -bench Idle -benchtime 1x -count 5 ./sink/
//
// go run ./bench/idle measures the public modes the same way, with flags.
func BenchmarkIdle(b *testing.B) {
	for _, mode := range []IdleMode{IdleWake, IdlePoll, idleBackoff} {
		for _, shards := range []int{2, 8} {
			b.Run(fmt.Sprintf("mode=%s/shards=%d", mode, shards), func(b *testing.B) {
				var cpu, block, busy float64
				n := 0
				for b.Loop() {
					m := benchIdle(b, mode, shards)
					cpu, block, busy = cpu+m.idleCPU, block+m.pickupBlock, busy+m.pickupBusy
					n++
				}
				b.ReportMetric(cpu/float64(n), "idle-cpu-%")
				b.ReportMetric(block/float64(n), "pickup-block-µs")
				b.ReportMetric(busy/float64(n), "pickup-busy-µs")
			})
		}
	}
}

// idleMeasurement is one run of benchIdle.
type idleMeasurement struct {
	idleCPU     float64 // process CPU over one idle second, % of one core
	pickupBlock float64 // median µs until Drain sees a value; the pusher blocks
	pickupBusy  float64 // the same with a pusher that keeps its P busy
}

func benchIdle(b *testing.B, mode IdleMode, shards int) idleMeasurement {
	var lat atomic.Int64
	cfg := Config[time.Time]{
		Shards: shards,
		Idle:   mode,
		Logger: slog.New(slog.DiscardHandler),
	}
	if mode == idleBackoff {
		cfg.Idle = IdlePoll // IdleSleep's default: 100 µs
	}
	s, err := newTuned(cfg, ActionFunc[time.Time](func(_ context.Context, batch []time.Time) {
		now := time.Now()
		for _, t := range batch {
			lat.Store(int64(now.Sub(t)))
		}
	}), experiments{}, mode == idleBackoff)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Shutdown(context.Background()) }()

	time.Sleep(100 * time.Millisecond)
	before := processCPU(b)
	start := time.Now()
	time.Sleep(time.Second)
	cpu := processCPU(b) - before
	m := idleMeasurement{idleCPU: 100 * float64(cpu) / float64(time.Since(start))}

	pickup := func(busy bool) float64 {
		var us []float64
		h := s.Handle()
		for range 100 {
			time.Sleep(2*time.Millisecond + rand.N(2*time.Millisecond))
			lat.Store(-1)
			h.Push(time.Now())
			for lat.Load() < 0 {
				if !busy {
					time.Sleep(time.Microsecond)
				}
			}
			us = append(us, float64(lat.Load())/1e3)
		}
		slices.Sort(us)
		return us[len(us)/2]
	}
	m.pickupBlock = pickup(false)
	m.pickupBusy = pickup(true)
	return m
}

func processCPU(b *testing.B) time.Duration {
	cpu, err := cputime.Process()
	if err != nil {
		b.Fatal(err)
	}
	return cpu
}
