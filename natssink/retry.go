package natssink

import (
	"time"
)

// retryLoop is the retry goroutine: while values are in flight it looks at
// the slots every tick (a quarter of the shorter of AckTimeout and
// RetryBackoff, within [1 ms, 50 ms]), republishes the values whose ack is
// overdue or whose backoff has passed, and gives up on those out of
// attempts or budget; it delivers the failure reports. While nothing is in
// flight and no report waits, it parks until poked (by the first value in
// flight, or a failure) or stopped.
func (s *Sink[T]) retryLoop() {
	defer close(s.retryDone)
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		wait := time.Duration(-1)
		if s.inflight.Load() > 0 {
			wait = s.cfg.tick
		}
		if r := s.reporter.untilDue(s.now()); r >= 0 && (wait < 0 || r < wait) {
			wait = r
		}
		var tick <-chan time.Time
		if wait >= 0 {
			t.Reset(wait)
			tick = t.C
		}
		select {
		case <-tick:
		case <-s.wake:
		case <-s.stop:
			t.Stop()
			return
		}
		t.Stop()
		now := s.now()
		s.scan(now)
		s.reporter.deliver(now, false)
	}
}

// scan acts on every slot whose due time has come.
func (s *Sink[T]) scan(now int64) {
	s.slots.eachDue(s.pool.highWater.Load(), now, func(idx int32, sl *slot) {
		sl.mu.Lock()
		if d := sl.due.Load(); d != 0 && d <= now {
			if sl.backingOff {
				s.republish(sl, idx, now)
			} else {
				s.timedOut(sl, idx, now)
			}
		}
		s.unlockSettled(sl, idx)
	})
}
