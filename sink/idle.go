package sink

import "time"

// idleWait is called after a round that found nothing to drain. What it does
// depends on the idle mode; it returns early when Shutdown begins.
func (w *worker[T]) idleWait() {
	switch w.s.cfg.idle {
	case IdlePoll:
		w.sleep(w.s.cfg.idleSleep)
	case idleBackoff:
		// Adaptive polling: the sleep starts at IdleSleep and doubles
		// after each empty round up to defaultWakeRecheck; a batch resets
		// it (idleRounds = 0).
		if w.idleRounds == 0 {
			w.backoff = w.s.cfg.idleSleep
		}
		w.idleRounds++
		w.sleep(w.backoff)
		w.backoff = min(2*w.backoff, defaultWakeRecheck)
	default:
		w.park()
	}
}

// park is IdleWake: sleep on the doorbell, at the first round that finds
// nothing. It does not yield first (runtime.Gosched, to be found awake by
// the next value): a yield puts the worker behind every busy goroutine,
// while a worker that parks is woken by the push onto the pusher's
// processor, next in line. yieldDue's doc has the measurement.
func (w *worker[T]) park() {
	sh := w.sh
	// The doorbell's Dekker pair, the one home of its argument (the
	// sink's other Dekker pairs, PushWait's and the hand-off's, follow it).
	// The worker stores the flag (a sequentially consistent store), then
	// looks at the ring: vyukov's Len loads its tail. A producer claims
	// its slot with a compare-and-swap on that tail (a locked
	// instruction), then loads the flag (Handle.Push, Sink.Push). So
	// either the producer's load sees 1 and rings, or Len sees the value
	// and the worker does not park. The stamp publish that follows the
	// claim is a release store (internal/machine) and takes no part in
	// the pair. With a ring that gives no such edge (chanring's Len is an
	// unsynchronised read) a doorbell can slip; the timer below bounds
	// the delay to IdleSleep.
	sh.setSleeping(true)
	if sh.ring.Len() > 0 || w.s.reached(phaseStopping) || w.stealBehind() {
		sh.setSleeping(false)
		return
	}
	var recheck <-chan time.Time // nil, which blocks, without a recheck
	if !w.s.cfg.noRecheck {
		w.timer.Reset(w.s.cfg.idleSleep)
		recheck = w.timer.C
	}
	select {
	case <-sh.doorbell:
		// Woken by a producer (which cleared the flag), by another worker
		// whose ring is backing up, or by Flush.
		w.timer.Stop()
	case <-recheck:
		// The safety net. Park again at once if the round finds nothing.
	case <-w.s.stop:
		w.timer.Stop()
	}
	// Clear the flag if no waker did. A producer that still sees 1 may
	// ring too: the token stays in the channel, and the next park returns
	// at once, finds nothing, and parks again. Harmless.
	sh.setSleeping(false)
	w.blocked()
}

// stealBehind reports whether the worker, about to park with its flag
// set, goes round again instead, to steal values that wait behind another
// worker's Drain call (the steal watch, stealwatch.go, found some): it
// points the steal cursor at that shard. It does so once, until a round
// takes values: a victim whose values it cannot take does not keep it
// spinning.
func (w *worker[T]) stealBehind() bool {
	if w.hinted {
		w.hinted = false
		return false
	}
	v, ok := w.s.strandedVictim(w.home)
	if ok {
		w.victim, w.hinted = v, true
	}
	return ok
}

// sleep blocks for d, until Flush drops a token into the doorbell (in the
// polling modes producers never do; see Sink.nudge), or until Shutdown
// begins.
func (w *worker[T]) sleep(d time.Duration) {
	w.timer.Reset(d)
	select {
	case <-w.timer.C:
	case <-w.sh.doorbell:
		w.timer.Stop()
	case <-w.s.stop:
		w.timer.Stop()
	}
	w.blocked()
}

// blocked records that the worker has just given up its processor, in a
// wait of idle.go or a yield: the time from which yieldDue counts.
func (w *worker[T]) blocked() { w.lastYield = w.s.now() }

// waitBatch is the wait of a worker that holds a short batch for MaxDelay:
// until a producer pushes into its ring, Flush or Shutdown wakes it, or the
// batch's MaxDelay has passed. In IdleWake mode the worker parks on its
// doorbell as an idle worker does, with the batch's deadline as the timer,
// so each push into its ring wakes it to take the value (the same doorbell
// a push rings today for a parked worker). In the polling modes producers
// never ring, and the worker sleeps for IdleSleep or until the deadline,
// whichever is sooner.
func (w *worker[T]) waitBatch() {
	left := w.s.cfg.maxDelay - time.Since(w.first)
	if left <= 0 {
		return
	}
	if w.s.cfg.idle != IdleWake {
		w.sleep(min(left, w.s.cfg.idleSleep))
		return
	}
	sh := w.sh
	// The Dekker pair of park, with the producers' push and with Flush,
	// which raises flushing before it loads the flag (Sink.nudge).
	sh.setSleeping(true)
	if sh.ring.Len() > 0 || w.s.reached(phaseStopping) || w.s.flushing.Load() != 0 || w.stealBehind() {
		sh.setSleeping(false)
		return
	}
	w.timer.Reset(left)
	select {
	case <-sh.doorbell:
		w.timer.Stop()
	case <-w.timer.C:
	case <-w.s.stop:
		w.timer.Stop()
	}
	sh.setSleeping(false)
	w.blocked()
}
