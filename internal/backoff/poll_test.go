package backoff

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestPollWaitsWithADoublingBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var at []time.Duration
		start := time.Now()
		err := Poll(context.Background(), time.Millisecond, 4*time.Millisecond, nil, nil, func() bool {
			at = append(at, time.Since(start))
			return len(at) == 5
		})
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		want := []time.Duration{0, 1, 3, 7, 11} // sleeps of 1, 2, 4, 4 ms
		for i := range want {
			want[i] *= time.Millisecond
		}
		if len(at) != len(want) {
			t.Fatalf("cond called at %v, want %v", at, want)
		}
		for i := range want {
			if at[i] != want[i] {
				t.Fatalf("cond called at %v, want %v", at, want)
			}
		}
	})
}

func TestPollEndsWithItsCtxOrStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		calls := 0
		err := Poll(ctx, time.Millisecond, time.Millisecond, nil, nil, func() bool { calls++; return false })
		if !errors.Is(err, context.DeadlineExceeded) || calls < 10 {
			t.Fatalf("Poll with a 10 ms ctx: %v after %d calls", err, calls)
		}
		stop := make(chan struct{})
		stopped := errors.New("stopped")
		time.AfterFunc(5*time.Millisecond, func() { close(stop) })
		if err := Poll(context.Background(), time.Hour, time.Hour, stop, stopped, func() bool { return false }); err != stopped {
			t.Fatalf("Poll with stop closed: %v, want %v", err, stopped)
		}
		// cond holding when ctx ends wins.
		ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel2()
		var done atomic.Bool
		time.AfterFunc(5*time.Millisecond, func() { done.Store(true) })
		if err := Poll(ctx2, time.Hour, time.Hour, nil, nil, done.Load); err != nil {
			t.Fatalf("Poll whose cond held when ctx ended: %v", err)
		}
	})
}
