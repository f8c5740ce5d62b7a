package limit

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestEveryHandsOutOneTurnPerInterval(t *testing.T) {
	var e Every
	const ms = int64(time.Millisecond)
	for _, c := range []struct {
		now  int64
		want bool
	}{{5 * ms, true}, {5 * ms, false}, {14 * ms, false}, {15 * ms, true}, {16 * ms, false}, {40 * ms, true}} {
		last := e.Last()
		if got := e.Turn(c.now, 10*time.Millisecond); got != c.want {
			t.Fatalf("Turn at %v: %v, want %v", time.Duration(c.now), got, c.want)
		}
		if want := map[bool]int64{true: c.now, false: last}[c.want]; e.Last() != want {
			t.Fatalf("Last after Turn at %v: %v, want %v", time.Duration(c.now), time.Duration(e.Last()), time.Duration(want))
		}
	}
}

func TestOfCallersThatAskAtOnceOneGetsTheTurn(t *testing.T) {
	var e Every
	var turns atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if e.Turn(int64(time.Second), time.Minute) {
				turns.Add(1)
			}
		})
	}
	wg.Wait()
	if turns.Load() != 1 {
		t.Fatalf("%d turns, want 1", turns.Load())
	}
}
