package mpmc_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// lostWakeup bounds every wait in these tests. A wait that runs into it is
// a lost wake-up (or a deadlock), and the test fails instead of hanging.
const lostWakeup = 30 * time.Second

// deadline returns a context that ends after lostWakeup, or when the test
// ends.
func deadline(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), lostWakeup)
	t.Cleanup(cancel)
	return ctx
}

// errStalled is the cause of a stallDeadline context that ended.
var errStalled = errors.New("no progress for " + lostWakeup.String() + " (a lost wake-up or a deadlock)")

// stallDeadline returns a context that ends, with cause errStalled, once
// progress has not been called for lostWakeup, and the progress function
// that the test calls after each step it completes. A test of many rounds
// bounds each wait rather than the whole run with it: its run time
// depends on the machine (100,000 ping-pong rounds between locked threads
// take 10 s on a quiet 2-core VM and over 30 s on a loaded one), but a
// lost wake-up stops progress for good. The watchdog's goroutine ends with
// the test.
func stallDeadline(t testing.TB) (ctx context.Context, progress func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	var steps atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(lostWakeup / 30)
		defer tick.Stop()
		last, since := steps.Load(), time.Now()
		for {
			select {
			case <-stop:
				return
			case now := <-tick.C:
				if n := steps.Load(); n != last {
					last, since = n, now
				} else if now.Sub(since) >= lostWakeup {
					cancel(errStalled)
					return
				}
			}
		}
	})
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
		cancel(nil)
	})
	return ctx, func() { steps.Add(1) }
}

// parallel runs each function in its own goroutine and waits for all of
// them: easy_parallel's Parallel, which the async-channel tests use.
func parallel(fns ...func()) {
	var wg sync.WaitGroup
	for _, f := range fns {
		wg.Go(f)
	}
	wg.Wait()
}

// each returns n copies of f, each called with its index, for parallel.
func each(n int, f func(i int)) []func() {
	fns := make([]func(), n)
	for i := range n {
		fns[i] = func() { f(i) }
	}
	return fns
}

// gate holds goroutines that a test hook stops until the test opens it.
type gate chan struct{}

func (g gate) wait() { <-g }
func (g gate) open() { close(g) }

// markKey marks the ctx of the operation that a hook should act on.
type markKey struct{}

func marked(ctx context.Context) context.Context { return context.WithValue(ctx, markKey{}, true) }

func isMarked(ctx context.Context) bool { return ctx.Value(markKey{}) != nil }
