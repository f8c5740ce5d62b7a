package sink_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardedsink/shardedsink/internal/cputime"
	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/vyukov"
	"github.com/shardedsink/shardedsink/sink"
)

// The PushWait measurements of issue 36's goals. Each benchmark is one
// experiment, whatever b.N: run them with -benchtime 1x.
//
//	go test -run '^$' -bench PushWait -benchtime 1x -count 5 ./sink/

// stalledSink returns a one-shard sink whose Drain calls wait on the
// returned channel (one receive per call, or its close), with its ring
// full.
func stalledSink(b *testing.B, capacity int, r ring.Factory[int]) (*sink.Sink[int], chan struct{}) {
	step := make(chan struct{})
	entered := make(chan struct{}, 1)
	s := sink.MustNew(sink.Config[int]{
		Shards: 1, RingCapacity: capacity, BatchSize: 1, Ring: r,
		OverloadInterval: time.Hour, OnOverload: func(sink.Overload) {},
	}, sink.ActionFunc[int](func(ctx context.Context, _ []int) {
		select {
		case entered <- struct{}{}:
		default:
		}
		select {
		case <-step:
		case <-ctx.Done():
		}
	}))
	h := s.Handle()
	h.Push(-1)
	<-entered
	for s.Stats().Queued != 0 {
		time.Sleep(10 * time.Microsecond)
	}
	for i := range capacity {
		if !h.Push(i) {
			b.Fatal("the ring of a stalled sink refused a push")
		}
	}
	return s, step
}

func shutdown(b *testing.B, s *sink.Sink[int], step chan struct{}) {
	close(step)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkPushWaitGivesUp: 64 waiters on a stalled sink, each PushWait
// with a 1 ms deadline, 10,000 waits in all: how long after its deadline
// each returns (the goal: the max within 1 ms). The floor row does the
// same waits on the ctx alone (<-ctx.Done()), with no sink: what the Go
// runtime's timers and scheduler give on this machine.
func BenchmarkPushWaitGivesUp(b *testing.B) {
	for _, impl := range []string{"PushWait", "ctx-alone"} {
		b.Run("impl="+impl, func(b *testing.B) { benchGiveUp(b, impl == "PushWait") })
	}
}

func benchGiveUp(b *testing.B, viaSink bool) {
	s, step := stalledSink(b, 16, nil)
	defer shutdown(b, s, step)
	h := s.Handle()
	const waiters, waits = 64, 10_000
	late := make([][]time.Duration, waiters)
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := range waiters {
		n := waits / waiters
		if w < waits%waiters {
			n++
		}
		wg.Go(func() {
			for range n {
				deadline := time.Now().Add(time.Millisecond)
				ctx, cancel := context.WithDeadline(context.Background(), deadline)
				var err error
				if viaSink {
					err = h.PushWait(ctx, 0)
				} else {
					<-ctx.Done()
					err = ctx.Err()
				}
				late[w] = append(late[w], time.Since(deadline))
				cancel()
				if err != context.DeadlineExceeded {
					b.Errorf("the wait returned %v, want the deadline", err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	all := slices.Concat(late...)
	slices.Sort(all)
	b.ReportMetric(float64(len(all)), "waits")
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-late-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-late-µs")
	b.ReportMetric(float64(all[len(all)-1].Microseconds()), "max-late-µs")
	if got, want := s.Stats().WaitedOut, map[bool]int{true: len(all)}[viaSink]; got != uint64(want) {
		b.Fatalf("WaitedOut = %d, want %d", got, want)
	}
}

// BenchmarkPushWaitParked: the CPU of the whole process over one second
// while 64 waiters are parked on a stalled sink (the goal: under 1 % of a
// core), next to the same second with no waiter.
func BenchmarkPushWaitParked(b *testing.B) {
	s, step := stalledSink(b, 16, nil)
	defer shutdown(b, s, step)
	window := func() float64 {
		c0, err := cputime.Process()
		if err != nil {
			b.Skip(err)
		}
		t0 := time.Now()
		time.Sleep(time.Second)
		c1, _ := cputime.Process()
		return 100 * float64(c1-c0) / float64(time.Since(t0))
	}
	idle := window()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	const waiters = 64
	h := s.Handle()
	for range waiters {
		wg.Go(func() { _ = h.PushWait(ctx, 0) })
	}
	for s.Stats().Waiting != waiters {
		time.Sleep(time.Millisecond)
	}
	parked := window()
	cancel()
	wg.Wait()
	b.ReportMetric(idle, "idle-core-%")
	b.ReportMetric(parked, "parked-core-%")
}

// poppedAt is a vyukov ring that records when its last value was popped.
type poppedAt struct {
	*vyukov.Ring[int]
	at atomic.Int64 // Unix ns of the last successful TryPop
}

func (r *poppedAt) TryPop() (int, bool) {
	v, ok := r.Ring.TryPop()
	if ok {
		r.at.Store(time.Now().UnixNano())
	}
	return v, ok
}

// BenchmarkPushWaitWakes: one waiter parked on a full ring of one slot;
// the Drain call returns, the worker pops the next value and wakes the
// waiter: the time from that pop to the waiter's return, over 2,000 rounds
// (the goals: p50 within 50 µs, p99 within 500 µs).
func BenchmarkPushWaitWakes(b *testing.B) {
	var r *poppedAt
	s, step := stalledSink(b, 1, func(capacity int) ring.Ring[int] {
		r = &poppedAt{Ring: vyukov.New[int](capacity)}
		return r
	})
	defer shutdown(b, s, step)
	h := s.Handle()
	const rounds = 2000
	lat := make([]time.Duration, 0, rounds)
	b.ResetTimer()
	for i := range rounds {
		done := make(chan time.Time, 1)
		go func() {
			if err := h.PushWait(context.Background(), i); err != nil {
				b.Error(err)
			}
			done <- time.Now()
		}()
		for s.Stats().Waiting != 1 {
			time.Sleep(20 * time.Microsecond)
		}
		step <- struct{}{} // the Drain call returns; the next round pops
		ret := <-done
		lat = append(lat, ret.Sub(time.Unix(0, r.at.Load())))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-wake-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-wake-µs")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-wake-µs")
}
