package mpmc_test

import (
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/shardedsink/shardedsink/internal/cputime"
	"github.com/shardedsink/shardedsink/mpmc"
)

// BenchmarkReadyWakeup: how long after a send a worker that selects on the
// readiness of two mpmc channels and a ticker has the value in hand,
// against the same worker on two Go channels. Each op sends one value, to
// either channel in turn, into a worker that is asleep in its select (the
// sender waits for the worker's acknowledgement, then 20 µs more, so that
// the worker parks again). The value is the send's time; the worker
// measures the delay when TryRecv returns it. Reported: wake-p50-ns,
// wake-p99-ns, and the process's CPU per op (process-cpu-ns/op: the
// sender's send, sleep and acknowledgement too). The worker is not locked
// to a thread: a goroutine locked to one wakes only on that thread, which
// costs a thread wake-up more, and a Go worker does not do that.
//
//	bash mpmc/testdata/ready-bench.sh   # writes testdata/ready-bench.txt
func BenchmarkReadyWakeup(b *testing.B) {
	for _, impl := range []string{"mpmc", "chan"} {
		b.Run("impl="+impl, func(b *testing.B) {
			base := time.Now()
			ack := make(chan time.Duration, 1)
			done := make(chan struct{})
			var send [2]func(int64)
			var worker, stop func()
			switch impl {
			case "mpmc":
				s1, r1 := mpmc.Bounded[int64](16)
				s2, r2 := mpmc.Unbounded[int64]()
				stop = func() { s1.Release(); s2.Release() }
				send = [2]func(int64){func(v int64) { _ = s1.TrySend(v) }, func(v int64) { _ = s2.TrySend(v) }}
				worker = func() {
					defer r1.Release()
					defer r2.Release()
					readyLoop(base, ack, r1, r2)
				}
			case "chan":
				c1, c2 := make(chan int64, 16), make(chan int64, 64)
				stop = func() { close(c1); close(c2) }
				send = [2]func(int64){func(v int64) { c1 <- v }, func(v int64) { c2 <- v }}
				worker = func() { chanLoop(base, ack, c1, c2) }
			}
			go func() {
				defer close(done)
				worker()
			}()
			start, err := cputime.Process()
			if err != nil {
				b.Skip(err)
			}
			lat := make([]time.Duration, 0, 1024)
			for i := 0; b.Loop(); i++ {
				time.Sleep(20 * time.Microsecond) // the worker parks
				send[i%2](int64(time.Since(base)))
				lat = append(lat, <-ack)
			}
			b.StopTimer()
			end, _ := cputime.Process()
			stop() // ends the worker
			<-done
			b.ReportMetric(float64((end-start).Nanoseconds())/float64(len(lat)), "process-cpu-ns/op")
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "wake-p50-ns")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "wake-p99-ns")
		})
	}
}

// readyLoop is the worker of BenchmarkReadyWakeup on two mpmc channels and
// a ticker; it ends when both are closed.
func readyLoop(base time.Time, ack chan<- time.Duration, r1, r2 *mpmc.Receiver[int64]) {
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	ready1, ready2 := r1.Ready(), r2.Ready()
	take := func(r *mpmc.Receiver[int64], ready *<-chan struct{}) {
		v, err := r.TryRecv()
		switch {
		case err == nil:
			ack <- time.Since(base) - time.Duration(v)
		case errors.Is(err, mpmc.ErrClosed):
			*ready = nil
		}
	}
	for ready1 != nil || ready2 != nil {
		select {
		case <-ready1:
			take(r1, &ready1)
		case <-ready2:
			take(r2, &ready2)
		case <-ticker.C:
		}
	}
}

// chanLoop is readyLoop on two Go channels.
func chanLoop(base time.Time, ack chan<- time.Duration, c1, c2 <-chan int64) {
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for c1 != nil || c2 != nil {
		select {
		case v, ok := <-c1:
			if !ok {
				c1 = nil
				continue
			}
			ack <- time.Since(base) - time.Duration(v)
		case v, ok := <-c2:
			if !ok {
				c2 = nil
				continue
			}
			ack <- time.Since(base) - time.Duration(v)
		case <-ticker.C:
		}
	}
}

// TestAWorkerSelectingOnReadyUsesNoCPUWhileIdle: a worker selecting on the
// readiness of two channels and a ticker of 50 ms, with nothing sent for
// 300 ms, uses no CPU beyond its few ticks (no polling): its OS thread's
// CPU time, which waiting for a core on a loaded machine does not add to,
// stays under 1 % of the idle time. It then takes one value, to show that
// it was listening.
func TestAWorkerSelectingOnReadyUsesNoCPUWhileIdle(t *testing.T) {
	if _, err := cputime.Thread(); err != nil {
		t.Skip(err)
	}
	s1, r1 := mpmc.Bounded[int](4)
	s2, r2 := mpmc.Unbounded[int]()
	used := make(chan time.Duration)
	got := make(chan int)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer r1.Release()
		defer r2.Release()
		ticker := time.NewTicker(50 * time.Millisecond)
		defer ticker.Stop()
		start, _ := cputime.Thread()
		ready1, ready2 := r1.Ready(), r2.Ready()
		ticks := 0
		for {
			select {
			case <-ready1:
				if v, err := r1.TryRecv(); err == nil {
					end, _ := cputime.Thread()
					used <- end - start
					got <- v
					return
				}
			case <-ready2:
				_, _ = r2.TryRecv()
			case <-ticker.C:
				ticks++
			}
		}
	}()
	const idle = 300 * time.Millisecond
	time.Sleep(idle)
	require := func(ok bool, format string, args ...any) {
		if !ok {
			t.Fatalf(format, args...)
		}
	}
	require(s1.TrySend(42) == nil, "send")
	cpu := <-used
	require(<-got == 42, "the worker took another value")
	t.Logf("worker thread CPU over %v idle: %v (%.3f %%)", idle, cpu, 100*float64(cpu)/float64(idle))
	require(cpu < idle/100, "the idle worker used %v of CPU in %v: it polls", cpu, idle)
	s1.Release()
	s2.Release()
}
