package sink

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/shardedsink/shardedsink/internal/layout"
	"github.com/shardedsink/shardedsink/internal/sinkhook"
)

// The hand-off: what a push does when its ring is full, and the one home
// of the rule that decides whether it parks or sheds (mayPark, with
// shedAge for a call in progress). The users' text, the same words in
// every package that pushes (TestThePromiseIsOneText keeps them so): a
// push never waits on the destination, however slow: a full ring sheds,
// and a push parks only while its drain worker is short of CPU behind a
// destination that keeps up (or, with Spill, while the spiller moves
// values to disk), for at most HandOffWait in all.
//
// A ring fills for one of two reasons. Either the destination is slower
// than the pushes, and shedding is the sink's answer; or the drain worker
// is short of CPU: goroutines that push outnumber the cores and never
// block, and the Go scheduler, which has no priorities, runs the worker
// (queued behind them after each yield, preemption or system call) a few
// percent of the time. Shedding does not help there: the producers go on
// running and the worker stays starved. A parked producer leaves the run
// queue; once the producers of a shard are parked, the worker runs.
//
// The tell is the destination's pace (drainState.pace): the shortest of
// the worker's last paceRound to 2 × paceRound calls into the destination
// (its Drain calls, or with a callTimer its timed calls, of every worker:
// the shortest any worker saw, since they all go to the one destination;
// judged per shard, one worker's rare slow call made otelsink's pushes
// shed, and 47 to 53 % of a 64-goroutine burst was exported in 1 run of 5,
// against 99.97 % in 14 of 14 with the shortest: cd otelsink && go test
// -run '^$' -bench 'ExportedShare/g=64/impl=otelsink$' -benchtime 10000x;
// a timed Drain call that makes no call, as most of otelsink's, does not
// count). A worker short
// of CPU stretches calls (a Write whose system call returns waits for a
// processor), it never shortens them, so the shortest of several is the
// destination's own time. Behind a destination whose pace is under
// FastCall (250 µs) a full ring means a worker short of CPU, and a push
// parks for up to HandOffWait (keepsUp); so it does before the first call
// ends, while no call is in progress (the worker has not run: it waits
// for a CPU). Behind a slower destination, or a first call in progress,
// it sheds at once, whatever the per-call time. With the earlier tell, the
// age of the call in progress against SlowDrain alone, issue 62's program
// (8 paced producers, Shards 2, RingCapacity 1024, BatchSize 256, a Drain
// sleeping 5 ms a call) saw pushes of 1.003 s; the table of both, hand-off
// on and off: docs/benchmarks.md, "What a push waits for". Tried and
// dropped (throwaway builds, gone with them): the process's CPU time
// (getrusage) against GOMAXPROCS, as the
// tell or as leave to park briefly behind a slow destination (whose pipe
// reader may run behind the producers): a machine loaded by others reads
// as spare CPU (256 producers on locked threads had up to 141 k of 512 k
// pushes shed), and with two goroutines spinning on both cores every park
// cost its push a preemption, 20 to 56 ms; runtime/metrics'
// /sched/latencies, which samples too few schedulings of goroutines that
// never block to say anything within milliseconds.
//
// The rule, in order (mayPark; the yield in handOff): the hand-off off,
// DropOldest (budget.go's refused: it displaces), or Shutdown begun:
// shed. A call in progress older than SlowDrain (with a callTimer, of
// any shard: drainstate.go): shed, after one yield while the call is
// younger than SlowDrain + returnedCallWindow and the destination keeps
// up (yieldToAReturnedCall: behind a slow destination a yield only costs
// the push a turn in the run queue, 40 to 56 ms with both cores busy).
// Then mayPark: no sheds; yes parks until the worker takes values (or a
// Drain call of it returns) and the push gets in, and gives up (sheds)
// once HandOffWait has passed, once mayPark, asked again at every
// wake-up, says no, or when Shutdown begins. HandOffWait bounds a call's waits in
// all, whatever path it takes (logsink's admission and push share it:
// shardHooks.HandOff's spent). A spill tier that takes the shard's values
// lifts the pace test: a push then waits for the spiller's moves, which
// free room every millisecond, within the same bound. Only a ring full in
// slots hands off: a push that the byte budget alone refused sheds as
// before (shard.handOffPush says why).
//
// The protocol, Dekker's pattern as in PushWait and the doorbell: a parked
// push joins its shard's queue (raising n) before its last try; a worker
// changes the ring (its pops) or the Action's own state (Drain returned)
// before it loads n. Go's atomics are sequentially consistent, so either
// the try sees the change or the worker sees the push and wakes it. The
// worker wakes as many parked pushes as it freed room for, oldest first
// (handOffQueue.wake); a woken push that finds the room taken by one that
// never parked goes back to the front.
//
// While a spill tier takes the shard's values, the spiller does more than
// wake: after each move it pushes the values of the parked pushes itself,
// oldest first, into the room it has just made (handOffQueue.admit), and
// then wakes them, in. A push of a value (not shardHooks.HandOff's admission)
// lends the spiller a copy of it when it parks, and the spiller pushes it
// only while the push sleeps (handOffQueue.sleep and rouse, under the
// queue's mutex), so that the value goes in once, by one of them. Woken to
// try for themselves, parked pushes lost that room, move after move, to
// pushes that never parked, which held the processors a woken push waits
// for: 16 producers flat out into a Drain stalled from its first call shed
// 1 to 14 values as ring-full with the disk 1 % used, in 6 runs of 10
// under -race and 10 of 10 without, each push woken 42 to 48 times in its
// 100 ms (TestAStalledDrainShedsNothingWhileTheDiskHasRoom).
//
// Fair mode, after a slow Drain call, as sync.Mutex's starvation mode. When
// a Drain call that ran longer than SlowDrain returns (a stall of the
// destination ends), every producer of the shard is running or parked
// against a full ring. A woken push runs only once the scheduler gets to
// it, and meanwhile callers that are running take the room it was woken
// for: it lost that race for tens of milliseconds, woken 30 to 60 times
// (zapsink's stalled-pipe probe, go test -run '^$' -bench
// 'StalledPipe/logger=zapsink-Core$' -benchtime 1x ./zapsink/, in the
// second after the stall: calls of 125 to 240 ms, against 15 to 20 ms with
// the hand-off off, which sheds nearly every record). So within
// handOffFairWindow of such a Drain call, once a woken push that has waited
// handOffFairAfter finds no room, the queue turns fair: a caller with an
// admission of its own (shardHooks.HandOff, which logsink checks with
// shardHooks.HandOffState on every record: one atomic load) joins the queue
// instead of taking room first, and a push that joins while others are
// parked or woken parks without trying, for at most handOffFairAfter before
// it looks (the pushes ahead may have got in and the worker taken their
// values before it was listed). The room then goes to the pushes the worker
// wakes for it, oldest first. The queue turns unfair again once a push gets
// in within handOffFairAfter with none parked behind it, once the last one
// leaves, and once the window is over. Fair mode is kept to that window:
// outside it, a queue made fair cost a push a wake-up per record, and with
// two goroutines keeping both cores busy (zapsink's offered-rate probe,
// -bench '^BenchmarkOffered$') the callers got 111 to 249 k records/s
// through, against 250 to 321 k. Push itself never looks (its listing is
// fixed): only a push that found its ring full takes its turn.
//
// The same race, and the same fair mode, while a spill tier takes what a
// slow Drain call leaves in the ring (mayTurnFair): there the pushes park
// on the spiller's moves, and a push woken for room that others took
// waited for several of them (with a SpillDir, the stalled-pipe probes'
// longest calls were 59 to 100 ms in fair mode's absence, 14 to 33 ms
// with it; the same run without the tier 14 to 20 ms: 4 interleaved runs,
// -bench 'StalledPipe/logger=zerologsink(-SpillDir)?$' -benchtime 1x
// ./zerologsink/ and 'StalledPipe/logger=zapsink-Core(-SpillDir)?$'
// ./zapsink/).
//
// Within the window after a Drain call that ran longer than handOffStall
// (a stall, not a worker short of CPU) a push waits no longer than
// handOffRecoveringCap in all, fair or not: the destination has just been
// slow, and pushes woken again and again for room that others took made
// the longest calls of zerologsink's stalled-pipe probe 23 to 47 ms,
// against 12 to 20 ms with the hand-off off. A spill tier that takes the
// shard's values lifts the cap: there a push waits for the spiller rather
// than be shed.

// SlowDrain is how long a Drain call runs before the sink takes its
// destination to be slow (for this repository's front-ends, which time
// their calls into the destination, how long such a call runs): a push into a
// full ring of that shard then sheds at once instead of handing off (see
// Config.HandOffWait), and a parked push stops waiting. A Drain call of
// a worker short of CPU runs long too
// (its Write returns to find its processor given away, and it waits in the
// run queue, behind goroutines that may each run for the runtime's 10 ms
// slice), and a shorter threshold misreads it as a slow destination: at 1
// or 2 ms zapsink's healthy-file probe (BenchmarkFile, 64 goroutines) shed
// records into a file that kept up, and at 5 ms, once the worker stopped
// yielding after every batch while pushes are parked, 0.3 to 0.8 % at 256
// goroutines; at 10 ms it sheds none (2-core AMD EPYC; cd zapsink && go
// test -run '^$' -bench '^BenchmarkFile$/logger=zapsink-Core' -benchtime 1x).
const SlowDrain = 10 * time.Millisecond

// handOffQueue holds the pushes parked on one shard's worker, oldest
// first. One per shard, on cache lines of its own: parked pushes write
// it, the shard's worker loads n once per take and per Drain call.
type handOffQueue struct {
	handOffFields
	_ [layout.CacheLine - unsafe.Sizeof(handOffFields{})%layout.CacheLine]byte
}

// handOffFields are handOffQueue's fields, apart so that its padding
// follows their size on every architecture.
type handOffFields struct {
	mu sync.Mutex
	// waiting lists the parked pushes (see parkList). Guarded by mu.
	waiting parkList
	// state holds, in one word that a caller loads at once
	// (shardHooks.HandOffState), the number of pushes parked or about to
	// park (those in waiting, and those woken that have not left yet) in
	// units of handOffOne, whether the queue is fair (see the top of this
	// file), and whether the shard's spill tier takes its values
	// (spillTier.pass). Written under mu, but for the spill bit, which
	// only the spiller writes; a plain int32 used through sync/atomic's
	// functions, so that wake and callers load it without mu.
	state int32
	// parked counts the pushes that parked here (Stats.HandOffs): a
	// monotone counter, added to once per push that waited, whatever the
	// wait's outcome.
	_      [0]atomic.Uint64
	parked uint64
}

// The bits of handOffFields.state.
const (
	handOffFairBit  = 1 // the queue is fair
	handOffSpillBit = 2 // the shard's spill tier takes its values
	handOffOne      = 4 // one push parked or about to park
)

// count returns the pushes parked on q or about to park: one atomic load.
func (q *handOffQueue) count() int32 { return atomic.LoadInt32(&q.state) / handOffOne }

// fair reports whether q is fair: one atomic load.
func (q *handOffQueue) fair() bool { return atomic.LoadInt32(&q.state)&handOffFairBit != 0 }

// setSpilling records whether the shard's spill tier takes its values:
// one atomic load when that has not changed. The spiller's.
func (q *handOffQueue) setSpilling(on bool) {
	if st := atomic.LoadInt32(&q.state); st&handOffSpillBit != 0 == on {
		return
	}
	if on {
		atomic.OrInt32(&q.state, handOffSpillBit)
	} else {
		atomic.AndInt32(&q.state, ^int32(handOffSpillBit))
	}
}

// handOffFairAfter is how long a push waits, woken for room that others
// took, before the queue turns fair: sync.Mutex's starvation threshold.
const handOffFairAfter = time.Millisecond

// handOffWaiter is one parked push: its place in the queue and the timer
// that bounds its sleep.
type handOffWaiter struct {
	*parked
	t *time.Timer
}

// valueWaiter is a handOffWaiter with the value that its push puts into
// the ring of shard, for the spiller's admit: push, made once per waiter,
// pushes v there, and parked.admit is push while v is a parked push's
// value (nil otherwise). Pooled per sink (Sink.waiters).
type valueWaiter[T any] struct {
	handOffWaiter
	v     T
	shard int
	push  func() bool
}

// sleep marks w asleep, about to wait for its wake-up: from now on the
// spiller may push its value for it (admit). A waiter without a value
// takes no lock.
func (q *handOffQueue) sleep(w *handOffWaiter) {
	if w.admit == nil {
		return
	}
	q.mu.Lock()
	w.asleep = true
	q.mu.Unlock()
}

// rouse marks w awake, back from its wait, and reports whether the
// spiller pushed its value meanwhile: it is then in the ring, and w must
// not try again.
func (q *handOffQueue) rouse(w *handOffWaiter) (admitted bool) {
	if w.admit == nil {
		return false
	}
	q.mu.Lock()
	w.asleep = false
	admitted = w.admitted
	q.mu.Unlock()
	return admitted
}

// admit pushes the values of the oldest pushes that sleep on q (oldest
// first, until the ring refuses one) and wakes them: one atomic load when
// none is parked. The spiller's, after each move (see the top of this
// file). It returns how many it pushed.
func (q *handOffQueue) admit() int {
	if q.count() == 0 {
		return 0
	}
	q.mu.Lock()
	n := q.waiting.admitOldest()
	q.mu.Unlock()
	return n
}

// join parks w on q, at the back, and reports whether w must wait its
// turn: q is fair and other pushes are parked or woken ahead of it. The
// caller must call leave once it gives up or gets in.
func (q *handOffQueue) join(w *handOffWaiter) (behind bool) {
	q.mu.Lock()
	behind = q.fair() && q.count() != 0
	q.waiting.add(w.parked, false)
	atomic.AddInt32(&q.state, handOffOne)
	q.mu.Unlock()
	return behind
}

// requeue puts w, which is about to try again, back at the front of q if
// wake took it off (it was the oldest, and found the room taken by a push
// that never parked); a w still listed keeps its place. It turns q fair
// when fair is set.
func (q *handOffQueue) requeue(w *handOffWaiter, fair bool) {
	q.mu.Lock()
	if !w.listed {
		w.clearWake()
		q.waiting.add(w.parked, true)
	}
	if fair && !q.fair() {
		atomic.OrInt32(&q.state, handOffFairBit)
	}
	q.mu.Unlock()
}

// leave takes w off q: out of waiting if it is still there, and its
// token, if wake sent one that it has not received, out of its channel.
// A fair q turns unfair when w was the last, when w got in within
// handOffFairAfter of joining (quick) with none parked behind it, or when
// the window after a slow Drain call that allowed it is over.
func (q *handOffQueue) leave(w *handOffWaiter, quick, windowOver bool) {
	q.mu.Lock()
	if !q.waiting.remove(w.parked) {
		w.clearWake()
	}
	st := atomic.AddInt32(&q.state, -handOffOne)
	if st&handOffFairBit != 0 && (st/handOffOne == 0 || windowOver || quick && q.waiting.len() == 0) {
		atomic.AndInt32(&q.state, ^int32(handOffFairBit))
	}
	q.mu.Unlock()
}

// wake wakes the k oldest pushes parked on q, one for each slot or
// record of room the worker freed: one atomic load when none is parked. Waking only as many as
// there is room for hands the room to the pushes that waited longest; a
// broadcast let the first to run take it all, and the others waited for
// up to the whole HandOffWait.
func (q *handOffQueue) wake(k int) {
	if q.count() == 0 {
		return
	}
	q.mu.Lock()
	q.waiting.wakeOldest(k, -1)
	q.mu.Unlock()
}

// getWaiter returns an idle waiter from the sink's pool, or a new one. A
// push that parks needs one; under a starved worker most pushes do, and a
// channel and timer made for each would allocate on every one. The pool
// is the sink's, not the package's: a timer made inside a
// testing/synctest bubble belongs to that bubble, and so does a sink made
// there.
func (s *Sink[T]) getWaiter() *valueWaiter[T] {
	if w, ok := s.waiters.Get().(*valueWaiter[T]); ok {
		return w
	}
	t := time.NewTimer(time.Hour)
	t.Stop()
	w := &valueWaiter[T]{handOffWaiter: handOffWaiter{parked: newParked(0), t: t}}
	w.push = func() bool { return s.shards[w.shard].ring.TryPush(w.v) }
	return w
}

// putWaiter returns w to the sink's pool, its value cleared so that the
// pool keeps nothing of the caller's alive.
func (s *Sink[T]) putWaiter(w *valueWaiter[T]) {
	var zero T
	w.v, w.admit, w.asleep, w.admitted = zero, nil, false, false
	s.waiters.Put(w)
}

// handOff is the hand-off of a push into shard i that found the ring full
// (see the top of this file): while mayPark allows it, it parks
// until the worker takes values, tries again with try, and repeats, for
// at most HandOffWait less spent (what the caller's earlier hand-offs of
// the same call waited) in all. It reports whether try succeeded, and how
// long it waited. It returns false at once with the hand-off off, once
// Shutdown has begun, and while the destination is slow. v, when not nil,
// is the value that try pushes into shard i's ring: while the caller
// sleeps the spiller may push a copy of it for the caller (admit), and try
// is not called again.
func (s *Sink[T]) handOff(i int, spent int64, try func() bool, v *T) (ok bool, waited int64) {
	if s.cfg.handOffWait == 0 || s.isClosing() || spent >= int64(s.cfg.handOffWait) {
		return false, 0
	}
	if age, shed := s.shedAge(i, s.now()); shed {
		// The call may have returned, its worker waiting for a processor:
		// a push that yielded to it hands off if it has ended.
		if !s.keepsUp(i) || !yieldToAReturnedCall(age) || s.shedsNow(i, s.now()) {
			return false, 0
		}
	}
	if !s.mayPark(i) {
		return false, 0
	}
	q := &s.handOffs[i]
	// The wait ends HandOffWait after the call's first hand-off began:
	// the one bound of a call's wait, whatever path it takes.
	began := s.now()
	deadline := began + int64(s.cfg.handOffWait) - spent
	w := s.getWaiter()
	defer s.putWaiter(w)
	if v != nil && s.spill != nil {
		w.v, w.shard, w.admit = *v, i, w.push
	}
	behind := q.join(&w.handOffWaiter)
	for parks := 0; ; parks++ {
		// Behind others in a fair queue, the first try is theirs: the
		// push parks at once, until the worker's wake-ups reach it.
		if (parks != 0 || !behind) && try() {
			now := s.now()
			q.leave(&w.handOffWaiter, now-began < int64(handOffFairAfter), !s.mayTurnFair(i, now))
			return true, now - began
		}
		if parks == 0 {
			atomic.AddUint64(&q.parked, 1)
			// A polling worker may be asleep for a whole IdleSleep, and
			// the spiller while no Drain call runs.
			s.nudge(&s.shards[i])
			if s.spill != nil {
				s.spill.wake()
			}
		}
		sleep := min(s.recheckIn(i), max(time.Duration(deadline-s.now()), 0)+time.Microsecond)
		if now := s.now(); s.waitCapped(i, now) {
			// After a stall, a push waits no longer than handOffRecoveringCap
			// in all: the destination has just been slow.
			sleep = min(sleep, max(time.Duration(began+int64(handOffRecoveringCap)-now), 0)+time.Microsecond)
		}
		if parks == 0 && behind {
			// The pushes ahead may all have got in before this one was
			// listed, and the worker taken their values: no wake-up
			// may come for it.
			sleep = min(sleep, handOffFairAfter)
		}
		w.t.Reset(sleep)
		q.sleep(&w.handOffWaiter)
		select {
		case <-w.ready:
		case <-w.t.C:
		case <-s.stop:
			w.t.Stop()
			admitted := q.rouse(&w.handOffWaiter)
			q.leave(&w.handOffWaiter, false, false)
			return admitted, s.now() - began
		}
		w.t.Stop()
		if q.rouse(&w.handOffWaiter) {
			// The spiller pushed the value: in, as if try had.
			now := s.now()
			q.leave(&w.handOffWaiter, false, !s.mayTurnFair(i, now))
			return true, now - began
		}
		now := s.now()
		if age, shed := s.shedAge(i, now); shed && s.keepsUp(i) && yieldToAReturnedCall(age) {
			now = s.now() // the call may have ended meanwhile
		}
		if now >= deadline || !s.mayPark(i) ||
			now-began >= int64(handOffRecoveringCap) && s.waitCapped(i, now) || s.shedsNow(i, now) || s.isClosing() {
			q.leave(&w.handOffWaiter, false, !s.mayTurnFair(i, now))
			return try(), now - began
		}
		q.requeue(&w.handOffWaiter, now-began >= int64(handOffFairAfter) && s.mayTurnFair(i, now))
	}
}

// mayPark reports whether a push refused by shard i's full ring may park
// now (the rule: the top of this file): while the shard's spill tier
// takes its values, or behind a destination that keeps up.
func (s *Sink[T]) mayPark(i int) bool { return s.spillTakes(i) || s.keepsUp(i) }

// keepsUp reports whether shard i's destination keeps up with a worker
// that runs (the top of this file): its pace is under FastCall, or, before
// any pace is known, no call is in progress. With a callTimer the pace is
// the shortest that any worker saw.
func (s *Sink[T]) keepsUp(i int) bool {
	ds, timed := s.judges(i)
	now := s.now()
	pace, known, inCall := int64(0), false, false
	for j := range ds {
		if p, ok := ds[j].pace(); ok && (!known || p < pace) {
			pace, known = p, true
		}
		if _, ok := ds[j].pending(now, timed); ok {
			inCall = true
		}
	}
	if !known {
		return !inCall
	}
	return pace < int64(FastCall)
}

// FastCall is the pace (the shortest of the recent calls into the
// destination) from which the sink takes a destination to be slow, and a
// push into a full ring sheds instead of parking: the package doc, "What
// a push waits for". A healthy file's Write of a batch takes tens of
// microseconds; a network round trip, an fsync or a 0.5 ms sleep is slow.
const FastCall = 250 * time.Microsecond

// yieldToAReturnedCall yields the processor (runtime.Gosched), and
// reports that it did, for a push that would shed because a call into the
// destination has run age, longer than SlowDrain, while that call is
// younger than SlowDrain + returnedCallWindow; the push then looks again,
// and hands off if the call has ended meanwhile. Such a call may have
// returned already: a Write whose system call lost its processor goes to
// the global run queue when it returns, behind every runnable goroutine,
// and the runtime looks there once in 61 schedules. Pushes that shed do
// not park, so they schedule only when they are preempted or yield: the
// worker waited 7 to 20 ms to run (go test -trace), the pushes shed
// meanwhile, and zapsink's Core lost 0.5 to 2 % of its records into a
// healthy file from 256 goroutines in about one run of five (cd zapsink
// && go test -run '^$' -bench 'File/logger=zapsink-Core/goroutines=256$'
// -benchtime 1x). A push that yields goes behind the worker in that
// queue, and the Ps run the global queue once their own is empty, so the
// worker gets a processor within a few yields and ends its call
// (TestPushesThatShedYieldToACallThatReturned: 3 to 70 µs; with the
// yield removed, 20 to 403 ms, medians 282 to 322 ms). Against a destination
// that does stall, the yields end once the call is SlowDrain +
// returnedCallWindow old: each push that sheds meanwhile costs its caller
// one yield.
func yieldToAReturnedCall(age int64) bool {
	if age < int64(SlowDrain+returnedCallWindow) {
		runtime.Gosched()
		return true
	}
	return false
}

// returnedCallWindow is how long past SlowDrain the pushes that shed
// yield to a call that may have returned (yieldToAReturnedCall). With
// SlowDrain (20 ms in all), zapsink's offered-rate probe, where two
// goroutines that never yield keep both cores busy, still shed about
// 1,200 records in one run of eight for a call 22 ms old: a processor
// that runs such a goroutine comes to its run queue only when the runtime
// preempts it, after 10 ms. With 4 × SlowDrain, none in 16, in two
// batches of 8 where the code before the yields lost records in 5 and in
// 3 (cd zapsink && go test -run '^$' -bench 'Offered/logger=zapsink-Core$'
// -benchtime 1x).
const returnedCallWindow = 4 * SlowDrain

// handOffRecoveringCap bounds a push's whole wait within
// handOffFairWindow of a Drain call that ran longer than handOffStall (see
// the top of this file). Half of SlowDrain: a push woken by its timer
// still waits for a processor, up to the runtime's 10 ms slice, and with
// the cap the longest call of the stalled-pipe probes is that of the
// hand-off off (2-core AMD EPYC, 4 interleaved runs: zerologsink 13 to 19
// ms, against 23 to 47 ms without the cap and 12 to 20 ms with the
// hand-off off; cd zerologsink && go test -run '^$' -bench
// 'StalledPipe/logger=zerologsink(-NoHandOff)?$' -benchtime 1x).
const handOffRecoveringCap = SlowDrain / 2

// mayTurnFair reports whether shard i's queue may turn fair at now:
// within handOffFairWindow of a slow Drain call, and while a spill tier
// takes the values that a slow Drain call in progress leaves in the ring.
func (s *Sink[T]) mayTurnFair(i int, now int64) bool {
	return s.recovering(i, now) || s.drainSlow(i, now) && s.spillTakes(i)
}

// handOffStall is how long a Drain call runs before the window after it
// caps the waits of parked pushes (waitCapped): a stall of the
// destination, not a worker short of CPU. A worker's Drain call stretched
// by the run queue passes SlowDrain now and then, and with the cap after
// every such call, logsink's TestLoggersThatOutnumberTheCoresLoseNothing
// (64 goroutines into an in-memory writer) shed records in 2 runs of 35
// (178 and 7,217 of 256,000), against none in 20 before the cap and none
// in 30 with it after a stall only (go test -c ./logsink, then -test.run
// TestLoggersThatOutnumberTheCoresLoseNothing -test.v, run by run).
const handOffStall = 100 * time.Millisecond

// waitCapped reports whether a push parked on shard i waits no longer
// than handOffRecoveringCap in all at now: within handOffFairWindow of a
// Drain call that ran longer than handOffStall, unless a spill tier takes
// the shard's values (a push then waits for the spiller, which spills what
// Drain cannot take).
func (s *Sink[T]) waitCapped(i int, now int64) bool {
	return s.inWindowOf(i, now, func(d *drainState) *int64 { return &d.stallEnd }) && !s.spillTakes(i)
}

// handOffFairWindow is how long after a Drain call that ran longer than
// SlowDrain the hand-off queue of its shard may turn fair.
const handOffFairWindow = time.Second

// recovering reports whether shard i is, at now, within handOffFairWindow
// of the end of a Drain call that ran longer than SlowDrain.
func (s *Sink[T]) recovering(i int, now int64) bool {
	return s.inWindowOf(i, now, func(d *drainState) *int64 { return &d.slowEnd })
}

// inWindowOf reports whether now is within handOffFairWindow of the end
// that field picks (slowEnd or stallEnd) of one of shard i's judges.
func (s *Sink[T]) inWindowOf(i int, now int64, field func(*drainState) *int64) bool {
	ds, _ := s.judges(i)
	for j := range ds {
		if inWindow(atomic.LoadInt64(field(&ds[j])), now) {
			return true
		}
	}
	return false
}

// inWindow reports whether now is within handOffFairWindow of end, the
// end of a Drain call (0: none yet).
func inWindow(end, now int64) bool { return end != 0 && now-end < int64(handOffFairWindow) }

// handOffFair reports whether shard i's hand-off queue is fair (see the
// top of this file): one atomic load.
func (s *Sink[T]) handOffFair(i int) bool {
	return s.handOffs != nil && s.handOffs[i].fair()
}

// admitHandOffs pushes the values of the pushes asleep on shard i, the
// oldest first, while its ring takes them, and wakes them; it returns how
// many it pushed. The spiller's, after each move (see the top of this
// file): one atomic load when none is parked.
func (s *Sink[T]) admitHandOffs(i int) int {
	if s.handOffs == nil {
		return 0
	}
	return s.handOffs[i].admit()
}

// wakeHandOffs wakes up to k of the pushes parked on shard i, the oldest:
// one atomic load when none is. Workers call it after every take from the
// shard (k values taken), and after every Drain call of its home shard (k
// values drained), whose Action may free room of its own: logsink's
// admission counts records until Drain.
func (s *Sink[T]) wakeHandOffs(i, k int) {
	if s.handOffs != nil {
		s.handOffs[i].wake(k)
	}
}

// handOffsParked reports whether pushes are parked on shard i's worker.
func (s *Sink[T]) handOffsParked(i int) bool {
	return s.handOffs != nil && s.handOffs[i].count() != 0
}

// recheckIn returns how long a push parked on shard i sleeps, unless
// woken, before it looks at the shard again: until the oldest wait that
// decides the destination's slowness (drainState.pending, of every judge)
// would pass SlowDrain, or SlowDrain when none is in progress.
func (s *Sink[T]) recheckIn(i int) time.Duration {
	if s.spillTakes(i) {
		return SlowDrain
	}
	age, ok := s.oldestPending(i, s.now())
	if !ok {
		return SlowDrain
	}
	return max(SlowDrain-time.Duration(age), 0) + time.Microsecond
}

// oldestPending returns, at now, the age of the oldest wait of shard i's
// judges that decides the destination's slowness (drainState.pending),
// and false when none is in progress.
func (s *Sink[T]) oldestPending(i int, now int64) (age int64, ok bool) {
	ds, timed := s.judges(i)
	for j := range ds {
		if a, pending := ds[j].pending(now, timed); pending {
			age, ok = max(age, a), true
		}
	}
	return age, ok
}

// judges returns the drain states that decide whether shard i's
// destination is slow, and whether they are judged by timed calls (see
// drainstate.go): shard i's alone, or every shard's once the Action times
// its calls into the destination.
func (s *Sink[T]) judges(i int) (ds []drainState, timed bool) {
	if atomic.LoadInt32(&s.timed) != 0 {
		return s.drains, true
	}
	return s.drains[i : i+1], false
}

// now returns the time since the sink was made, in nanoseconds, plus one,
// so that no time it returns is 0, which drainState reads as none: the
// clock of drainState and of the hand-off's deadlines.
func (s *Sink[T]) now() int64 { return sinceEpoch(s.epoch) }

// sinceEpoch returns the time since epoch in nanoseconds, plus one: the
// clock of Sink.now and callTimer.
func sinceEpoch(epoch time.Time) int64 { return int64(time.Since(epoch)) + 1 }

// shedsNow reports whether a push into shard i's full ring sheds at now
// rather than park: a Drain call of its worker has run longer than
// SlowDrain, and no spill tier takes the shard's values (the spiller's
// takes wake parked pushes as the worker's do).
func (s *Sink[T]) shedsNow(i int, now int64) bool {
	_, shed := s.shedAge(i, now)
	return shed
}

// shedAge is shedsNow that returns, too, the age of the call that makes
// the push shed: one look at the judges for both.
func (s *Sink[T]) shedAge(i int, now int64) (age int64, shed bool) {
	age, slow := s.slowFor(i, now)
	return age, slow && !s.spillTakes(i)
}

// drainSlow reports whether shard i's destination is slow at now (see
// drainstate.go): a Drain call of shard i in progress, or, once the Action
// times its calls, some worker's call into the destination in progress,
// has run longer than SlowDrain.
func (s *Sink[T]) drainSlow(i int, now int64) bool {
	_, slow := s.slowFor(i, now)
	return slow
}

// slowFor is drainSlow that returns, too, the age of the oldest call in
// progress that decides it (oldestPending).
func (s *Sink[T]) slowFor(i int, now int64) (age int64, slow bool) {
	age, ok := s.oldestPending(i, now)
	return age, ok && age > int64(SlowDrain)
}

// shardHooks are a handle's shard's hooks (internal/sinkhook.Shard, whose
// doc states what each does), for a front-end with an admission of its
// own in front of the ring (logsink's, which sheds records below its
// KeepLevel before the ring is full).
type shardHooks[T any] struct{ h *Handle[T] }

// hooks returns h's shard's hooks (sinkhook.ShardOf).
func (h *Handle[T]) hooks() sinkhook.Shard {
	if h.sh == nil {
		panicUnmade("Handle")
	}
	return shardHooks[T]{h}
}

// HandOff is sinkhook.Shard.HandOff.
func (k shardHooks[T]) HandOff(spent time.Duration, ready func() bool) (ok bool, waited time.Duration) {
	h := k.h
	first := h.s.handOffFair(h.shard)
	if !first && ready() {
		return true, 0
	}
	ok, w := h.s.handOff(h.shard, int64(spent), ready, nil)
	return ok || first && ready(), time.Duration(w)
}

// HandOffState is sinkhook.Shard.HandOffState: one atomic load of a line
// that parked pushes, the worker's wake-ups and the spiller write (when
// what it reports changes). A caller whose pushes the ring takes while
// others are parked runs ahead of them: logsink's callers yield the
// processor now and then while records are parked and the tier takes, so
// that the parked ones get it (logsink's guarantee 1).
func (k shardHooks[T]) HandOffState() (parked, spilling, parkedFirst bool) {
	h := k.h
	if h.s.handOffs == nil {
		return false, false, false
	}
	st := atomic.LoadInt32(&h.s.handOffs[h.shard].state)
	return st/handOffOne != 0, st&handOffSpillBit != 0, st&handOffFairBit != 0
}
