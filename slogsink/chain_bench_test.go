package slogsink_test

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/shardedsink/shardedsink/internal/cputime"
	"github.com/shardedsink/shardedsink/slogsink"
)

// BenchmarkInfoOnAChain measures what the caller pays for one Info of five
// attributes on a logger of three With levels (one of them a group), the
// synchronous JSON handler against slogsink, both to io.Discard: the
// caller runs slog's own formatter in both, so the difference is what
// slogsink adds around it. cpu-ns/op is the CPU time of the logging
// goroutine's thread per call, which a loaded machine does not inflate
// (ns/op counts the time the goroutine waited for a core too). What the
// logging goroutine spends, and where, with the drain worker left out:
//
//	go test -run '^$' -bench InfoOnAChain -count 10 ./slogsink/
//	go test -run '^$' -bench InfoOnAChain -benchtime 1500000x -cpuprofile cpu.out ./slogsink/
//	go tool pprof -tagfocus caller=slogsink -top -cum cpu.out   # and caller=sync
func BenchmarkInfoOnAChain(b *testing.B) {
	for _, kind := range []string{"sync", "slogsink"} {
		b.Run("handler="+kind, func(b *testing.B) { infoOnAChain(b, kind, nil) })
	}
}

// infoOnAChain is BenchmarkInfoOnAChain's body for one handler: "sync"
// (opts unused) or "slogsink" with opts.
func infoOnAChain(b *testing.B, kind string, opts *slogsink.Options) {
	var h slog.Handler = slog.NewJSONHandler(io.Discard, nil)
	if kind == "slogsink" {
		sh, err := slogsink.New(io.Discard, opts)
		if err != nil {
			b.Fatal(err)
		}
		defer func() {
			if err := sh.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
			// Records are shed only when the worker gets too little CPU (a
			// loaded machine): the figures are then not the caller's cost
			// alone, as the records that follow a gap format its drop
			// report too.
			b.ReportMetric(100*float64(sh.Dropped())/float64(b.N), "%dropped")
		}()
		h = sh
	}
	lg := slog.New(h).With("service", "checkout").WithGroup("request").With("id", 42, "route", "/cart")
	b.ReportAllocs()
	defer threadCPU(b)()
	// The label marks the logging goroutine's samples in a CPU profile,
	// apart from the drain worker's.
	pprof.Do(context.Background(), pprof.Labels("caller", kind), func(context.Context) {
		for b.Loop() {
			lg.Info("served", "status", 200, "bytes", 1234, "user", "ann", "cached", true, "ms", 1.5)
		}
	})
}

// threadCPU locks the benchmark's goroutine to its OS thread and returns a
// func, to defer, that reports the thread's CPU time per op as cpu-ns/op
// (where the platform has a per-thread clock) and unlocks it.
func threadCPU(b *testing.B) func() {
	runtime.LockOSThread()
	start, startErr := cputime.Thread()
	return func() {
		end, err := cputime.Thread()
		runtime.UnlockOSThread()
		if startErr == nil && err == nil && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}
