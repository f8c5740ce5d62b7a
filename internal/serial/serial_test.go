package serial

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestTakeWaitsForTheHolderAndEndsWithItsCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New()
		ended, cancel := context.WithCancel(context.Background())
		cancel()
		// Free: an ended ctx does not keep it from being taken.
		if err := s.Take(ended); err != nil {
			t.Fatalf("Take of a free slot with an ended ctx: %v", err)
		}
		if err := s.Take(ended); !errors.Is(err, context.Canceled) {
			t.Fatalf("Take of a held slot with an ended ctx: %v", err)
		}
		took := make(chan time.Duration)
		start := time.Now()
		go func() {
			if err := s.Take(context.Background()); err != nil {
				t.Errorf("Take: %v", err)
			}
			took <- time.Since(start)
		}()
		time.Sleep(time.Second)
		s.Release()
		if d := <-took; d != time.Second {
			t.Fatalf("the second Take got the slot after %v, want when it was released (1s)", d)
		}
	})
}
