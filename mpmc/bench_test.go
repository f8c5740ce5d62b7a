package mpmc_test

import (
	"context"
	"testing"

	"github.com/shardedsink/shardedsink/mpmc"
)

// The single-goroutine costs of the operations that complete at once: one
// op is a send and a receive. Compare before and after a change with
//
//	go test -run '^$' -bench 'TryPath|WaitPath|All' -count=10 ./mpmc/ | tee new.txt
//	go run golang.org/x/perf/cmd/benchstat@latest old.txt new.txt
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
}

// BenchmarkTryPath: TrySend then TryRecv.
func BenchmarkTryPath(b *testing.B) {
	for _, k := range kindsForBench {
		b.Run(k.name, func(b *testing.B) {
			s, r := k.open()
			b.ReportAllocs()
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
