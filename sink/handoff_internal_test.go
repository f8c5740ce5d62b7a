package sink

import (
	"testing"
	"unsafe"

	"github.com/shardedsink/shardedsink/internal/layout"
)

// woken reports which of ws hold a wake-up token, and takes the tokens.
func woken(ws ...*handOffWaiter) []bool {
	got := make([]bool, len(ws))
	for i, w := range ws {
		select {
		case <-w.ready:
			got[i] = true
		default:
		}
	}
	return got
}

// The queue hands room to the pushes that waited longest: a wake for k
// values of room wakes the k oldest, a woken push that found the room
// taken goes back to the front, and one that leaves stops counting.
func TestHandOffQueueWakesTheOldestFirst(t *testing.T) {
	var q handOffQueue
	now := func() int64 { return 7 }
	a, b, c := newTestWaiter(), newTestWaiter(), newTestWaiter()
	q.join(a)
	q.join(b)
	q.join(c)
	q.wake(1, now)
	if got := woken(a, b, c); !got[0] || got[1] || got[2] {
		t.Fatalf("wake(1) woke %v, want only the oldest", got)
	}
	if q.woke != 7 {
		t.Fatalf("woke = %d, want the wake's time 7", q.woke)
	}
	q.requeue(a) // a found the room taken: back in front of b
	q.requeue(b) // b is still listed: it keeps its place
	q.wake(2, now)
	if got := woken(a, b, c); !got[0] || !got[1] || got[2] {
		t.Fatalf("wake(2) after a's requeue woke %v, want a and b", got)
	}
	q.leave(a)
	q.leave(b)
	q.leave(c)
	if q.n != 0 || q.waiting.len() != 0 {
		t.Fatalf("after every leave: n %d, %d listed", q.n, q.waiting.len())
	}
	q.wake(5, func() int64 { return 9 })
	if q.woke != 7 {
		t.Fatalf("a wake with nobody parked wrote woke: %d", q.woke)
	}
}

// A waiter that wake took off the queue and that leaves without reading
// its token leaves it behind for nobody: the next park starts clean.
func TestHandOffQueueLeaveTakesAnUnreadToken(t *testing.T) {
	var q handOffQueue
	w := newTestWaiter()
	q.join(w)
	q.wake(1, func() int64 { return 1 })
	q.leave(w)
	if got := woken(w); got[0] {
		t.Fatal("leave left the wake-up token in the waiter's channel")
	}
}

func newTestWaiter() *handOffWaiter {
	return &handOffWaiter{parked: newParked(0)}
}

// The per-shard queues fill whole blocks on every architecture: their
// padding follows their fields' sizes (GOARCH=386 checks the 32-bit case).
func TestTheShardQueuesFillWholeBlocks(t *testing.T) {
	for name, size := range map[string]uintptr{
		"handOffQueue": unsafe.Sizeof(handOffQueue{}),
		"waitQueue":    unsafe.Sizeof(waitQueue{}),
	} {
		if size%layout.CacheLine != 0 {
			t.Errorf("%s is %d bytes, not a whole number of %d-byte blocks", name, size, layout.CacheLine)
		}
	}
}
