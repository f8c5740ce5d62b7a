package main

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/bench/internal/report"
	"github.com/shardedsink/shardedsink/internal/cputime"
	"github.com/shardedsink/shardedsink/sink"
)

// settle is how long a new sink is left alone before the idle CPU is
// measured, so that its workers have gone idle.
const settle = 100 * time.Millisecond

// measure runs both measurements on one sink and returns the result and the
// sink's shard count.
func measure(o options) (Trial, int, error) {
	if o.rate > 0 {
		return measureTrickle(o)
	}
	var seen atomic.Int64 // how long the last value took to reach Drain, in ns
	got := make(chan struct{}, 1)
	s, err := sink.New(sink.Config[time.Time]{
		Shards:   o.shards,
		Idle:     o.mode,
		MaxDelay: o.maxDelay,
		Logger:   slog.New(slog.DiscardHandler),
	}, sink.ActionFunc[time.Time](func(_ context.Context, batch []time.Time) {
		now := time.Now()
		for _, pushed := range batch {
			seen.Store(int64(now.Sub(pushed)))
		}
		select {
		case got <- struct{}{}:
		default:
		}
	}))
	if err != nil {
		return Trial{}, 0, err
	}
	defer func() { _ = s.Shutdown(context.Background()) }()

	time.Sleep(settle)
	idlePct, _, err := cpuPercent(func() error { time.Sleep(o.duration); return nil })
	if err != nil {
		return Trial{}, 0, err
	}

	lat := make([]float64, 0, o.samples)
	h := s.Handle()
	for range o.samples {
		time.Sleep(2*time.Millisecond + rand.N(2*time.Millisecond))
		seen.Store(-1)
		select {
		case <-got: // a stale signal
		default:
		}
		h.Push(time.Now())
		if o.busy {
			// Keep the P, as a request handler that goes on working
			// would, so the worker must be started on another P.
			for seen.Load() < 0 {
			}
		} else {
			// Block at once, as a goroutine that goes back to waiting
			// would: the worker, readied into this P's run queue, runs
			// next.
			<-got
		}
		lat = append(lat, float64(seen.Load())/1e3)
	}
	slices.Sort(lat)
	return Trial{
		IdleCPUPct:  idlePct,
		PickupP50us: report.Percentile(lat, 0.50),
		PickupP99us: report.Percentile(lat, 0.99),
	}, s.Shards(), nil
}

// measureTrickle pushes o.rate values a second for o.duration, paced by the
// clock (each value goes at its own due time; a late producer catches up at
// once), and counts the Drain calls.
func measureTrickle(o options) (Trial, int, error) {
	var calls, values atomic.Int64
	s, err := sink.New(sink.Config[int]{
		Shards:   o.shards,
		Idle:     o.mode,
		MaxDelay: o.maxDelay,
		Logger:   slog.New(slog.DiscardHandler),
	}, sink.ActionFunc[int](func(_ context.Context, batch []int) {
		calls.Add(1)
		values.Add(int64(len(batch)))
	}))
	if err != nil {
		return Trial{}, 0, err
	}
	defer func() { _ = s.Shutdown(context.Background()) }()
	time.Sleep(settle)

	h := s.Handle()
	gap := time.Second / time.Duration(o.rate)
	n := int(o.duration / gap)
	cpuPct, elapsed, err := cpuPercent(func() error {
		start := time.Now()
		for i := range n {
			if d := time.Until(start.Add(time.Duration(i) * gap)); d > 0 {
				time.Sleep(d)
			}
			h.Push(i)
		}
		return s.Flush(context.Background())
	})
	if err != nil {
		return Trial{}, 0, err
	}
	c, v := calls.Load(), values.Load()
	tr := Trial{
		CallsPerSec: float64(c) / elapsed.Seconds(),
		TrickleCPU:  cpuPct,
	}
	if c > 0 {
		tr.MeanBatch = float64(v) / float64(c)
	}
	return tr, s.Shards(), nil
}

// cpuPercent runs f and returns the CPU time the whole process used
// meanwhile, as a percentage of one core over f's wall-clock time, and that
// time.
func cpuPercent(f func() error) (float64, time.Duration, error) {
	before, err := cputime.Process()
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	if err := f(); err != nil {
		return 0, 0, err
	}
	elapsed := time.Since(start)
	after, err := cputime.Process()
	if err != nil {
		return 0, 0, err
	}
	return 100 * float64(after-before) / float64(elapsed), elapsed, nil
}
