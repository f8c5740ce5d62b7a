package sink

import (
	"sync/atomic"
	"time"
)

// The steal watch. A worker inside a Drain call does not look at its ring,
// and a push into a ring whose worker is busy rings no doorbell; with
// IdleWake the other workers sleep until their own doorbell rings (over
// the default ring without a timer), so the values pushed behind a long
// Drain call would wait for its end while workers sat idle. The watch
// hands them to an idle worker, at no cost to a push and none to an idle
// sink:
//
//   - A worker that begins a Drain call (drainOne, after drainBegan's
//     store of the start) arms the watch unless it is armed (watchDrain):
//     one atomic load of watching per call, a compare-and-swap for the
//     first call after each look of the monitor, and a timer Reset for
//     the call that arms it.
//   - The monitor goroutine receives the timer (watchFired). For each
//     shard whose worker's Drain call has run for stealAfter or more and
//     whose ring holds values a worker may steal, it raises stranded and
//     rings the doorbell of a sleeping worker (wakeHelper). It arms the
//     timer again for the moment the next call in progress turns
//     stealAfter old, or stealAfter from now: so while a call is in
//     progress the watch looks at least every stealAfter. Once no Drain
//     call is in progress, and none began since its last look, it turns
//     the watch off.
//   - A worker about to park (park, waitBatch) that sees stranded looks for
//     a shard whose worker is in a Drain call and whose ring holds values
//     (strandedVictim), and if it finds one does not park: its next round
//     steals from that shard first. It does so once per round that took
//     values, so a victim whose values it cannot take (a held lock, a slot
//     claimed but not yet written) does not make it spin.
//
// So a value pushed while its worker is inside a Drain call reaches Drain
// through another worker within stealAfter of its push (the watch looks
// at the call when it turns stealAfter old, and every stealAfter after
// that), plus the scheduling delay, as long as a worker is free: the
// woken worker takes stealItems a round and goes round while values wait;
// where its own Drain call blocks too, the next look wakes another. With
// DisableStealing, or a polling idle mode, there is no watch. The monitor
// also runs OnOverload: a report that blocks delays the watch. What it
// costs: an idle sink, nothing once two looks found no Drain call; a
// busy one, the monitor's wake-up every stealAfter or so, and a timer
// Reset on the first Drain call after a quiet spell.
//
// The pairs: drainOne stores start, then loads watching; watchFired
// turns watching off, then loads every start (anyDraining): a call that
// began as the watch stopped either arms it again or is seen. watchFired
// stores stranded = 1, then loads the sleeping flags (wakeHelper); park
// stores its flag, then loads stranded: a worker that parks as the watch
// looks is either woken or sees stranded.

// stealAfter is how long a Drain call runs before the values waiting
// behind it go to an idle worker: SlowDrain, the age at which the
// hand-off too deems a call slow.
const stealAfter = SlowDrain

// The states of Sink.watching.
const (
	watchOff   = 0 // the timer is stopped
	watchQuiet = 1 // armed; no Drain call began since the monitor's last look
	watchSeen  = 2 // armed; a Drain call began since
)

// watchDrain arms the steal watch unless it is armed, and marks that a
// Drain call began. A worker calls it right after it recorded the start
// of a Drain call.
func (s *Sink[T]) watchDrain() {
	for {
		switch atomic.LoadInt32(&s.watching) {
		case watchSeen:
			return
		case watchQuiet:
			if atomic.CompareAndSwapInt32(&s.watching, watchQuiet, watchSeen) {
				return
			}
		default:
			if atomic.CompareAndSwapInt32(&s.watching, watchOff, watchSeen) {
				// The winner owns the timer until it fires: the monitor
				// touches it only after a fire, and then owns it until it
				// turns the watch off. Once Shutdown has begun the monitor
				// is gone or going, and the watch stays on, unarmed.
				if !s.reached(phaseStopping) {
					s.watchTimer.Reset(stealAfter)
				}
				return
			}
		}
	}
}

// watchFired is the monitor's turn of the watch when its timer fires. It
// looks behind the Drain calls in progress; with none, it looks once more
// after stealAfter if a call began since its last look, and otherwise
// turns the watch off. So a trickle of Drain calls keeps the watch on,
// and arming it (a timer Reset, which may wake a thread) stays off the
// path of the value that wakes an idle worker, but for the first after a
// quiet spell.
func (s *Sink[T]) watchFired() {
	for {
		if next, busy := s.lookBehindDrains(); busy {
			atomic.StoreInt32(&s.watching, watchQuiet)
			s.watchTimer.Reset(next)
			return
		}
		if atomic.CompareAndSwapInt32(&s.watching, watchSeen, watchQuiet) {
			s.watchTimer.Reset(stealAfter)
			return
		}
		if !atomic.CompareAndSwapInt32(&s.watching, watchQuiet, watchOff) {
			continue // a Drain call began: watchSeen
		}
		if !s.anyDraining() || !atomic.CompareAndSwapInt32(&s.watching, watchOff, watchSeen) {
			return
		}
	}
}

// lookBehindDrains wakes an idle worker for each shard whose worker's
// Drain call has run for stealAfter or more while its ring holds values
// that may be stolen, and sets stranded to whether there was one. It
// returns when to look again, and false when no Drain call is in progress.
func (s *Sink[T]) lookBehindDrains() (next time.Duration, busy bool) {
	now := s.now()
	due := int64(-1)
	stranded := false
	for i := range s.drains {
		start := atomic.LoadInt64(&s.drains[i].start)
		if start == 0 {
			continue
		}
		at := start + int64(stealAfter)
		if at <= now {
			if t := s.spill; t != nil && s.shards[i].ring.Len() > 0 {
				// The destination is slow: the spiller moves the ring's
				// values to disk once it holds a quarter (spillTier.due),
				// rather than wait for a push to park on a full ring.
				t.wake()
			}
			if s.cfg.stealVictims > 0 && s.stealable(i) {
				if !stranded {
					stranded = true
					atomic.StoreInt32(&s.stranded, 1)
				}
				s.wakeHelper(i)
			}
			at = now + int64(stealAfter)
		}
		if due < 0 || at < due {
			due = at
		}
	}
	if !stranded && atomic.LoadInt32(&s.stranded) != 0 {
		atomic.StoreInt32(&s.stranded, 0)
	}
	return time.Duration(due - now), due >= 0
}

// anyDraining reports whether a Drain call of some shard's worker is in
// progress.
func (s *Sink[T]) anyDraining() bool {
	for i := range s.drains {
		if atomic.LoadInt64(&s.drains[i].start) != 0 {
			return true
		}
	}
	return false
}

// stealable reports whether shard i's ring holds values that another
// worker may steal: none while its oldest values are on disk, for its own
// worker.
func (s *Sink[T]) stealable(i int) bool {
	if t := s.spill; t != nil && t.shards[i].hasDisk.Load() {
		return false
	}
	return s.shards[i].ring.Len() > 0
}

// strandedVictim returns a shard other than home whose worker is in a
// Drain call while its ring holds values that may be stolen, once the
// watch has found such values: false at the cost of one atomic load
// otherwise.
func (s *Sink[T]) strandedVictim(home int) (int, bool) {
	if atomic.LoadInt32(&s.stranded) == 0 {
		return 0, false
	}
	for i := range s.drains {
		if i != home && atomic.LoadInt64(&s.drains[i].start) != 0 && s.stealable(i) {
			return i, true
		}
	}
	return 0, false
}

// wakeHelper rings the doorbell of the first sleeping worker after shard
// i's.
func (s *Sink[T]) wakeHelper(i int) {
	n := len(s.shards)
	for k := 1; k < n; k++ {
		if sh := &s.shards[(i+k)%n]; sh.isSleeping() {
			sh.wake()
			return
		}
	}
}
