package mpmc_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/shardedsink/shardedsink/internal/cputime"
	"github.com/shardedsink/shardedsink/mpmc"
	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/vyukov"
)

// The single-goroutine costs of the operations that complete at once: one
// op is a send and a receive. Compare before and after a change with
//
//	go test -run '^$' -bench 'TryPath|WaitPath|All' -count=10 ./mpmc/ | tee new.txt
//	go run golang.org/x/perf/cmd/benchstat@latest old.txt new.txt
//
// Besides wall-clock ns/op, each reports cpu-ns/op: the CPU time of the
// benchmark's OS thread per op (internal/cputime), which leaves out the time
// the thread waited for a core on a shared, loaded machine.
//
// This package's test files import sync, which makes sync/atomic's methods
// inline here even where a user's package would call them (issue 8); the
// hot paths use the sync/atomic functions, which are intrinsics anyway.

var kindsForBench = []struct {
	name string
	open func() (*mpmc.Sender[int], *mpmc.Receiver[int])
}{
	{"Bounded", func() (*mpmc.Sender[int], *mpmc.Receiver[int]) { return mpmc.Bounded[int](1024) }},
	{"Unbounded", mpmc.Unbounded[int]},
	// Bounded with readiness armed (Receiver.Ready called once): what a
	// send and a receive pay for it; the rows above pay nothing.
	{"Bounded_ready", func() (*mpmc.Sender[int], *mpmc.Receiver[int]) {
		s, r := mpmc.Bounded[int](1024)
		_ = r.Ready()
		return s, r
	}},
	// A ring that BoundedOn puts behind its counted guard.
	{"BoundedOn_plain_vyukov", func() (*mpmc.Sender[int], *mpmc.Receiver[int]) {
		return mpmc.BoundedOn[int](benchPlainRing{vyukov.New[int](1024)})
	}},
	// The same ring seen as a ClosableRing that is not a *vyukov.Ring: no
	// guard, but the channel calls it through its interface like the one
	// above, so the two differ by the guard alone.
	{"BoundedOn_closable_vyukov", func() (*mpmc.Sender[int], *mpmc.Receiver[int]) {
		return mpmc.BoundedOn[int](benchClosableRing{vyukov.New[int](1024)})
	}},
}

// benchPlainRing hides every method of its ring beyond ring.Ring.
type benchPlainRing struct{ ring.Ring[int] }

// benchClosableRing is a *vyukov.Ring behind another type.
type benchClosableRing struct{ *vyukov.Ring[int] }

// threadCPU holds the benchmark goroutine on its OS thread and returns a
// function that reports the thread's CPU time per op, as cpu-ns/op (and
// per value, as cpu-ns/value, when perOp > 1).
func threadCPU(b *testing.B, perOp int) func() {
	runtime.LockOSThread()
	start, err := cputime.Thread()
	if err != nil {
		b.Skip(err)
	}
	return func() {
		end, _ := cputime.Thread()
		runtime.UnlockOSThread()
		ns := float64((end - start) / time.Nanosecond)
		b.ReportMetric(ns/float64(b.N), "cpu-ns/op")
		if perOp > 1 {
			b.ReportMetric(ns/float64(b.N*perOp), "cpu-ns/value")
		}
	}
}

// BenchmarkTryPath: TrySend then TryRecv.
func BenchmarkTryPath(b *testing.B) {
	for _, k := range kindsForBench {
		b.Run(k.name, func(b *testing.B) {
			s, r := k.open()
			b.ReportAllocs()
			defer threadCPU(b, 1)()
			for i := 0; b.Loop(); i++ {
				if err := s.TrySend(i); err != nil {
					b.Fatal(err)
				}
				if _, err := r.TryRecv(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWaitPath: Send then Recv that complete at once (no wait).
func BenchmarkWaitPath(b *testing.B) {
	ctx := context.Background()
	for _, k := range kindsForBench {
		b.Run(k.name, func(b *testing.B) {
			s, r := k.open()
			b.ReportAllocs()
			defer threadCPU(b, 1)()
			for i := 0; b.Loop(); i++ {
				if err := s.Send(ctx, i); err != nil {
					b.Fatal(err)
				}
				if _, err := r.Recv(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAll ranges over a busy channel: each op sends 1024 values, then
// takes them with one range over All (breaking out after the last), so the
// channel never runs empty under All. ns/value is the cost per value sent
// and taken. ctx=background has a nil Done channel; ctx=cancellable has
// one, which All checks at every step.
func BenchmarkAll(b *testing.B) {
	const batch = 1024
	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, c := range []struct {
		name string
		ctx  context.Context
	}{{"background", context.Background()}, {"cancellable", cctx}} {
		b.Run("ctx="+c.name, func(b *testing.B) {
			s, r := mpmc.Bounded[int](batch)
			b.ReportAllocs()
			defer threadCPU(b, batch)()
			for b.Loop() {
				for i := range batch {
					if err := s.TrySend(i); err != nil {
						b.Fatal(err)
					}
				}
				n := 0
				for range r.All(c.ctx) {
					if n++; n == batch {
						break
					}
				}
				if n != batch {
					b.Fatalf("took %d values, want %d", n, batch)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/value")
		})
	}
}
