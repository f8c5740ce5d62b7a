package sink

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

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
	a, b, c := newTestWaiter(), newTestWaiter(), newTestWaiter()
	q.join(a)
	q.join(b)
	q.join(c)
	q.wake(1)
	if got := woken(a, b, c); !got[0] || got[1] || got[2] {
		t.Fatalf("wake(1) woke %v, want only the oldest", got)
	}
	q.requeue(a, false) // a found the room taken: back in front of b
	q.requeue(b, false) // b is still listed: it keeps its place
	q.wake(2)
	if got := woken(a, b, c); !got[0] || !got[1] || got[2] {
		t.Fatalf("wake(2) after a's requeue woke %v, want a and b", got)
	}
	q.leave(a, true, false)
	q.leave(b, true, false)
	q.leave(c, false, false)
	if q.count() != 0 || q.waiting.len() != 0 {
		t.Fatalf("after every leave: n %d, %d listed", q.count(), q.waiting.len())
	}
	q.wake(5) // nobody parked: nothing to wake, nothing to lock
}

// A waiter that wake took off the queue and that leaves without reading
// its token leaves it behind for nobody: the next park starts clean.
func TestHandOffQueueLeaveTakesAnUnreadToken(t *testing.T) {
	var q handOffQueue
	w := newTestWaiter()
	q.join(w)
	q.wake(1)
	q.leave(w, false, false)
	if got := woken(w); got[0] {
		t.Fatal("leave left the wake-up token in the waiter's channel")
	}
}

// The queue turns fair when a woken push that found no room asks it to
// (handOff does, within handOffFairWindow of a slow Drain call, for a
// push that waited handOffFairAfter): a push that joins then waits its
// turn behind those parked or woken, and the queue turns unfair again
// once one gets in quickly with none parked behind it, once the window is
// over, or once the last leaves.
func TestHandOffQueueTurnsFairForAPushThatWaitedTooLong(t *testing.T) {
	var q handOffQueue
	a, b := newTestWaiter(), newTestWaiter()
	if q.join(a) {
		t.Fatal("an unfair queue put the first push behind")
	}
	if q.join(b) {
		t.Fatal("an unfair queue put a push behind others")
	}
	q.wake(1)
	q.requeue(a, false)
	if q.fair() {
		t.Fatal("the queue turned fair unasked")
	}
	woken(a)
	q.wake(1)
	q.requeue(a, true)
	if !q.fair() {
		t.Fatal("the queue stayed unfair when a push asked")
	}
	c := newTestWaiter()
	if !q.join(c) {
		t.Fatal("a push that joined a fair queue with others parked was not put behind")
	}
	woken(a, b, c)
	q.wake(1)
	if got := woken(a, b, c); !got[0] || got[1] || got[2] {
		t.Fatalf("wake(1) in a fair queue woke %v, want a, the oldest", got)
	}
	q.leave(a, false, false)
	if !q.fair() {
		t.Fatal("the queue turned unfair while pushes are parked")
	}
	q.leave(b, true, false) // quick, but c is still parked behind b
	if !q.fair() {
		t.Fatal("the queue turned unfair for a quick push with another parked behind it")
	}
	q.wake(1)
	woken(c)
	q.leave(c, true, false)
	if q.fair() {
		t.Fatal("the queue stayed fair after a push got in within handOffFairAfter, none behind")
	}
	if q.count() != 0 || q.waiting.len() != 0 {
		t.Fatalf("after every leave: n %d, %d listed", q.count(), q.waiting.len())
	}

	d, e := newTestWaiter(), newTestWaiter()
	q.join(d)
	q.join(e)
	q.requeue(d, true)
	q.leave(d, false, true) // the window is over
	if q.fair() {
		t.Fatal("the queue stayed fair after its window ended")
	}
	q.requeue(e, true)
	q.leave(e, false, false)
	if q.fair() {
		t.Fatal("the queue stayed fair after its last push left")
	}
}

// Only a Drain call that ran longer than SlowDrain opens the window in
// which the queue may turn fair, and the window closes handOffFairWindow
// after that call ended.
func TestTheFairWindowFollowsASlowDrainCall(t *testing.T) {
	s := &Sink[int]{drains: make([]drainState, 1)}
	const start = 1000
	s.drains[0].drainEnded(start, start+int64(SlowDrain), false)
	if s.recovering(0, start+int64(SlowDrain)) {
		t.Fatal("a Drain call of SlowDrain opened the fair window")
	}
	end := start + int64(SlowDrain) + 1 + int64(time.Second)
	s.drains[0].drainEnded(end-int64(SlowDrain)-1, end, false)
	if !s.recovering(0, end) || !s.recovering(0, end+int64(handOffFairWindow)-1) {
		t.Fatal("a Drain call longer than SlowDrain did not open the fair window")
	}
	if s.recovering(0, end+int64(handOffFairWindow)) {
		t.Fatal("the fair window outlasted handOffFairWindow")
	}
}

// Within the window after a Drain call longer than handOffStall (not one
// that only passed SlowDrain) a parked push's wait is capped, unless a
// spill tier takes the shard's values; a blocked tier (a full or failing
// disk) does not lift the cap.
func TestTheRecoveringCapIsLiftedByASpillTierThatTakes(t *testing.T) {
	s := &Sink[int]{drains: make([]drainState, 1)}
	const start = 1000
	slow := start + int64(SlowDrain) + 1
	s.drains[0].drainEnded(start, slow, false)
	if s.waitCapped(0, slow) {
		t.Fatal("a cap after a Drain call that passed SlowDrain but not handOffStall")
	}
	end := slow + int64(handOffStall) + 1
	s.drains[0].drainEnded(slow, end, false)
	if !s.waitCapped(0, end) {
		t.Fatal("no cap after a slow Drain call, without a spill tier")
	}
	if s.waitCapped(0, end+int64(handOffFairWindow)) {
		t.Fatal("the cap outlasted the window")
	}
	s.spill = &spillTier[int]{shards: make([]spillShard, 1)}
	if s.waitCapped(0, end) {
		t.Fatal("a cap while a spill tier takes the shard's values")
	}
	s.spill.shards[0].full = 1
	if !s.waitCapped(0, end) {
		t.Fatal("no cap while the shard's spill tier is blocked")
	}
}

// The queue may turn fair within the window after a slow Drain call, and
// while a spill tier takes what a slow Drain call in progress leaves: not
// while that call is young, nor without a tier, nor with a blocked one.
func TestTheQueueMayTurnFairWhileASpillTierTakes(t *testing.T) {
	s := &Sink[int]{drains: make([]drainState, 1)}
	const start = 1000
	s.drains[0].start = start
	slow := start + int64(SlowDrain) + 1
	if s.mayTurnFair(0, slow) {
		t.Fatal("fair while a slow Drain call runs, without a spill tier")
	}
	s.spill = &spillTier[int]{shards: make([]spillShard, 1)}
	if s.mayTurnFair(0, start+1) {
		t.Fatal("fair while a young Drain call runs")
	}
	if !s.mayTurnFair(0, slow) {
		t.Fatal("not fair while a spill tier takes what a slow Drain call leaves")
	}
	s.spill.shards[0].full = 1
	if s.mayTurnFair(0, slow) {
		t.Fatal("fair while the shard's spill tier is blocked")
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

// In a fair queue a caller with an admission of its own (Handle.HandOff)
// that finds others parked ahead waits its turn even though its admission
// has room: ready is not called until it has parked (here for
// handOffFairAfter, no wake-up coming). In an unfair queue ready is called
// at once.
func TestAFairQueuePutsACallerWithRoomBehindThoseParked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := bare(t, Config[int]{Shards: 1, RingCapacity: 8})
		q := &s.handOffs[0]
		ahead := newTestWaiter()
		q.join(ahead)
		q.requeue(ahead, true)
		var calls atomic.Int32
		ready := func() bool { calls.Add(1); return true }
		began := time.Now()
		var in atomic.Bool
		go func() { ok, _ := s.handles[0].hooks().HandOff(0, ready); in.Store(ok) }()
		synctest.Wait()
		if n := calls.Load(); n != 0 || in.Load() {
			t.Fatalf("behind a parked push, HandOff called ready %d times at once (in %v), want a park first", n, in.Load())
		}
		time.Sleep(handOffFairAfter)
		synctest.Wait()
		if !in.Load() || calls.Load() != 1 {
			t.Fatalf("after handOffFairAfter: in %v, ready called %d times, want in after one call", in.Load(), calls.Load())
		}
		if waited := time.Since(began); waited != handOffFairAfter {
			t.Fatalf("the caller waited %v, want handOffFairAfter", waited)
		}
		q.leave(ahead, false, false)
		calls.Store(0)
		if ok, _ := s.handles[0].hooks().HandOff(0, ready); !ok || calls.Load() != 1 {
			t.Fatalf("an unfair queue: ready called %d times, want once, at once", calls.Load())
		}
	})
}

// Once the Action times its calls into the destination, a Drain call that
// returned opens the windows after a slow call (fair mode, the wait cap)
// only by its longest call: a long Drain call whose calls were quick (a
// worker short of CPU between them) opens none, and a call the Action
// left open counts until the Drain call's end.
func TestATimedDrainCallOpensTheWindowsByItsLongestCall(t *testing.T) {
	s := &Sink[int]{drains: make([]drainState, 1), timed: 1}
	d := &s.drains[0]
	const start = 1000
	end := start + 2*int64(handOffStall)
	d.drainBegan(start)
	d.callBegan(start)
	d.callEnded(start + int64(SlowDrain))
	if s.drainSlow(0, end) {
		t.Fatal("slow with no call in progress")
	}
	d.drainEnded(start, end, true)
	if s.recovering(0, end) || s.waitCapped(0, end) {
		t.Fatal("a long Drain call of quick calls opened a window")
	}
	d.drainBegan(end)
	d.callBegan(end + 1)
	if !s.drainSlow(0, end+1+int64(SlowDrain)+1) {
		t.Fatal("not slow with a call in progress past SlowDrain")
	}
	later := end + 1 + int64(handOffStall) + 1
	d.drainEnded(end, later, true)
	if !s.recovering(0, later) || !s.waitCapped(0, later) {
		t.Fatal("a call left open past handOffStall opened no window")
	}
	if _, ok := d.pending(later, true); ok {
		t.Fatal("a call still pending after its Drain call ended")
	}
}

// Timed calls go to one destination: a call of shard 1's worker that has
// run past SlowDrain makes shard 0 slow too, and once it returns after
// handOffStall, shard 0's windows are open; a worker of shard 0 in a long
// Drain call but in no call (waiting for a lock whose holder is
// preempted) makes nobody slow. Untimed, each shard is judged alone.
func TestTimedCallsJudgeEveryShard(t *testing.T) {
	s := &Sink[int]{drains: make([]drainState, 2), timed: 1}
	const start = 1000
	s.drains[0].drainBegan(start)
	s.drains[1].drainBegan(start)
	s.drains[1].callBegan(start)
	past := start + int64(SlowDrain) + 1
	if !s.drainSlow(0, past) {
		t.Fatal("shard 0 not slow while shard 1's call runs past SlowDrain")
	}
	end := start + int64(handOffStall) + 2
	s.drains[1].callEnded(end)
	s.drains[1].drainEnded(start, end, true)
	if s.drainSlow(0, end) || s.drainSlow(1, end) {
		t.Fatal("slow with no call in progress")
	}
	if !s.recovering(0, end) || !s.waitCapped(0, end) {
		t.Fatal("shard 0's windows closed after shard 1's stalled call")
	}
	s.timed = 0
	if s.drainSlow(1, end) || s.recovering(0, end) {
		t.Fatal("untimed, shard 0 judged by shard 1")
	}
	if !s.drainSlow(0, end) {
		t.Fatal("untimed, shard 0's Drain call past SlowDrain is not slow")
	}
}

// A call's hand-offs share one bound: HandOff given what the call's
// earlier hand-offs waited (spent) waits only the rest of HandOffWait, and
// not at all once spent is HandOffWait; a push's own hand-off waits
// HandOffWait at most. (With the bound per hand-off, as before, logsink's
// Begin and admission each waited a whole HandOffWait: this test fails
// with the deadline taken from began alone.)
func TestACallsHandOffsShareOneBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const wait = 20 * time.Millisecond
		s := bare(t, Config[int]{Shards: 1, RingCapacity: 8, HandOffWait: wait})
		fill(t, s, 0, 8) // no worker: the ring stays full
		never := func() bool { return false }
		for _, spent := range []time.Duration{0, wait - 3*time.Millisecond, wait, 2 * wait} {
			t0 := time.Now()
			ok, waited := s.handles[0].hooks().HandOff(spent, never)
			took := time.Since(t0)
			require.False(t, ok)
			require.Equal(t, took, waited, "HandOff's waited is not the time it took")
			require.LessOrEqual(t, took, max(wait-spent, 0)+time.Millisecond, "spent %v: waited past the bound", spent)
			if spent < wait {
				require.GreaterOrEqual(t, took, wait-spent, "spent %v: gave up before the bound", spent)
			} else {
				require.Zero(t, took, "spent %v: waited although the bound was spent", spent)
			}
		}
		t0 := time.Now()
		require.False(t, s.Push(99))
		require.LessOrEqual(t, time.Since(t0), wait+time.Millisecond, "a push waited past HandOffWait")
	})
}
