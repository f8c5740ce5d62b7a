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
	lastShrink := s.now()
	for {
		wait := time.Duration(-1)
		if s.inflight.Load() > 0 {
			wait = s.cfg.tick
		}
		if r := s.reporter.untilDue(s.now()); r >= 0 && (wait < 0 || r < wait) {
			wait = r
		}
		if s.pool.highWater.Load() > chunkLen && (wait < 0 || wait > shrinkEvery) {
			wait = shrinkEvery // chunks that an outage needed may be given back
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
		if now-lastShrink >= int64(shrinkEvery) {
			s.pool.shrink(s.slots.drop)
			lastShrink = now
		}
	}
}

// shrinkEvery is how often the retry goroutine gives back the chunks of
// slots that no value in flight uses (pool.shrink): an outage's slots are
// freed within about two of these after its backlog clears.
const shrinkEvery = 10 * time.Second

// scan acts on every slot whose due time has come. While the stream does
// not answer (an attempt failed or timed out, and no ack has come since:
// Sink.outage), one value probes it, retried on its own backoff, and the
// others are held unpublished; the probe's ack ends the outage, and the
// next scan publishes them. So an outage costs each value about one
// publish (the probe's retries aside), not one per backoff step; new
// values wait likewise (publishFirst).
func (s *Sink[T]) scan(now int64) {
	probing := s.outage.Load()
	s.slots.eachDue(s.pool.highWater.Load(), now, func(idx int32, sl *slot) {
		sl.mu.Lock()
		if d := sl.due.Load(); d != 0 && d <= now {
			switch p := s.probe.Load(); {
			case probing && p != idx && p >= 0:
				s.hold(sl, idx, now)
			case sl.backingOff:
				if probing {
					s.probe.Store(idx)
				}
				s.republish(sl, idx, now)
			default:
				if probing {
					s.probe.Store(idx)
				}
				s.timedOut(sl, idx, now)
			}
		}
		s.unlockSettled(sl, idx)
	})
}
