package cputime_test

import (
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/allocs"
	"github.com/shardedsink/shardedsink/internal/cputime"
)

// lockThread pins the test goroutine to its OS thread for the rest of the
// test, so that readings of cputime.Thread belong to one thread.
func lockThread(t testing.TB) {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
}

// read returns cputime.Thread or skips the test where it is unsupported.
func read(t testing.TB) time.Duration {
	t.Helper()
	d, err := cputime.Thread()
	if errors.Is(err, cputime.ErrUnsupported) {
		t.Skipf("no per-thread CPU clock here: %v", err)
	}
	require.NoError(t, err)
	return d
}

var sink atomic.Uint64

// spin burns CPU on the calling thread until wall time d has passed. Its
// result goes to sink, so that the loop is not optimised away; the add is
// atomic because goroutines may spin at once.
func spin(d time.Duration) {
	var x uint64 = 1
	for start := time.Now(); time.Since(start) < d; {
		for range 1000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink.Add(x)
}

func TestErrUnsupportedWrapsTheStandardError(t *testing.T) {
	require.ErrorIs(t, cputime.ErrUnsupported, errors.ErrUnsupported)
	require.Contains(t, cputime.ErrUnsupported.Error(), "cputime: ")
}

func TestABusyLoopAdvancesTheClock(t *testing.T) {
	lockThread(t)
	const busy = 50 * time.Millisecond
	wallStart := time.Now()
	start := read(t)
	spin(busy)
	used := read(t) - start
	wall := time.Since(wallStart)
	t.Logf("busy %v wall: %v CPU on this thread", wall, used)
	// On a shared machine the thread may lose its core for part of the
	// loop, so ask only for a fifth of it; a broken clock (another thread's,
	// the process's, or a wall clock) fails one of the two bounds.
	require.GreaterOrEqual(t, used, busy/5, "a busy loop must consume CPU time")
	require.LessOrEqual(t, used, wall+5*time.Millisecond, "one thread cannot use more CPU than wall time")
}

func TestASleepBarelyAdvancesTheClock(t *testing.T) {
	// A real sleep, not testing/synctest: the point is that wall time passes
	// while this thread consumes no CPU.
	lockThread(t)
	start := read(t)
	time.Sleep(100 * time.Millisecond)
	used := read(t) - start
	t.Logf("100ms sleep: %v CPU on this thread", used)
	require.Less(t, used, 20*time.Millisecond, "a sleeping thread must not accumulate CPU time")
}

func TestTheClockIsMonotonic(t *testing.T) {
	lockThread(t)
	prev := read(t)
	require.GreaterOrEqual(t, prev, time.Duration(0))
	for range 10000 {
		now := read(t)
		require.GreaterOrEqual(t, now, prev)
		prev = now
	}
}

func TestThreadDoesNotAllocate(t *testing.T) {
	lockThread(t)
	read(t)
	require.Zero(t, allocs.PerCall(1000, func() { _, _ = cputime.Thread() }))
}

// BenchmarkThread measures one call: the price of a reading, which a
// measured loop pays twice.
func BenchmarkThread(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	read(b)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = cputime.Thread()
	}
}

// The process clock counts the work of every thread: two goroutines that
// spin at once on their own threads add both their loops to it.
func TestTheProcessClockCountsEveryThread(t *testing.T) {
	before, err := cputime.Process()
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip(err)
	}
	require.NoError(t, err)
	const busy = 30 * time.Millisecond
	var threads [2]time.Duration
	done := make(chan int)
	for i := range threads {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			start, err := cputime.Thread()
			spin(busy)
			end, err2 := cputime.Thread()
			if err == nil && err2 == nil {
				threads[i] = end - start
			}
			done <- i
		}()
	}
	<-done
	<-done
	after, err := cputime.Process()
	require.NoError(t, err)
	require.GreaterOrEqual(t, after-before, threads[0]+threads[1]-time.Millisecond,
		"the process clock holds at least both threads' CPU (rusage is kept to the microsecond)")
}
