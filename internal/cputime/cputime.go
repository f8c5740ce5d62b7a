// Package cputime reads the CPU time consumed by the calling OS thread.
//
// The contended benchmarks report CPU nanoseconds per operation measured on
// the producing thread, not wall-clock time. Per-thread CPU time counts every
// cycle the thread spends on the operation, including the cycles lost to
// compare-and-swap retries, cache-line transfers and spinning, but it stops
// while the thread is descheduled. With 256 producers on 2 cores, wall-clock
// time per operation mostly measures how long each producer waited for a core;
// CPU time measures what the operation itself cost. Both are reported: the
// harness keeps wall-clock latency percentiles beside it.
//
// # Holding the thread
//
// [Thread] reads the clock of the OS thread that runs the caller at that
// instant. The Go scheduler may move a goroutine to another thread at any
// point, so a reading means "this goroutine" only while the goroutine holds
// its thread:
//
//	runtime.LockOSThread()
//	defer runtime.UnlockOSThread()
//	start, err := cputime.Thread()
//	// ... the measured loop ...
//	end, _ := cputime.Thread()
//	perOp := (end - start) / time.Duration(n)
//
// Without LockOSThread the difference of two readings mixes the clocks of
// different threads and means nothing.
//
// # Cost
//
// One call is one clock_gettime(CLOCK_THREAD_CPUTIME_ID) system call: the
// vDSO does not serve the CPU-time clocks, so it enters the kernel. On the
// development machine (linux/amd64, AMD EPYC, 2 shared cores) one call took
// 0.74 to 0.94 µs and allocated nothing; measure it on yours with
//
//	go test -run '^$' -bench Thread ./internal/cputime/
//
// That is far above the cost of one ring operation, so never read the clock
// per operation: read it once before and once after a loop of many
// operations, which amortises the two calls to nothing.
//
// # Platforms
//
// Thread works where golang.org/x/sys/unix provides CLOCK_THREAD_CPUTIME_ID
// and ClockGettime: Linux, macOS, FreeBSD, OpenBSD, DragonFly BSD and
// Solaris/illumos. Elsewhere (Windows, NetBSD, Plan 9, js/wasm, ...) it returns
// [ErrUnsupported], which wraps [errors.ErrUnsupported].
package cputime

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

// ErrUnsupported is returned by [Thread] on platforms without a per-thread
// CPU clock. errors.Is(err, errors.ErrUnsupported) holds for it.
var ErrUnsupported = fmt.Errorf("cputime: no per-thread CPU clock on %s/%s: %w",
	runtime.GOOS, runtime.GOARCH, errors.ErrUnsupported)

// Thread returns the CPU time consumed so far by the OS thread that runs the
// caller. The caller must hold its thread with runtime.LockOSThread for two
// readings to belong to the same thread; see the package documentation.
//
// It returns [ErrUnsupported] where the platform has no per-thread CPU clock,
// and a wrapped system error if the clock cannot be read. It does not
// allocate on success.
func Thread() (time.Duration, error) {
	return thread()
}

// Process returns the CPU time, user and system, consumed so far by every
// thread of the process (getrusage RUSAGE_SELF): what a benchmark divides
// by its operations to count the work of the goroutines it does not run
// itself (workers, servers, the garbage collector). It returns an error
// that wraps [errors.ErrUnsupported] where the platform has no getrusage.
func Process() (time.Duration, error) {
	return process()
}
