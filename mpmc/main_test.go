package mpmc_test

import (
	"context"
	"sync"
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
