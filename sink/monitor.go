package sink

import (
	"fmt"
	"time"
)

// Overload reports values dropped since the monitor's previous check.
type Overload struct {
	Sink     string        // the sink's Name
	Delta    uint64        // values dropped since the previous report (> 0)
	Total    uint64        // values dropped since the sink was created
	Interval time.Duration // the OverloadInterval
}

// monitor is the overload monitor's goroutine. Every OverloadInterval it sums
// the drop counters and, only when the total rose since the last check,
// reports the rise. The first check comes one interval after New (a Go
// ticker does not fire at once, unlike the original's Tokio interval, whose
// first tick always saw a zero delta). Ticks missed while a report runs are
// dropped, not queued.
func (s *Sink[T]) monitor() {
	defer s.exited()
	t := time.NewTicker(s.cfg.overloadInterval)
	defer t.Stop()
	var last uint64
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		// The counters only grow, so the total rose exactly when it
		// differs from the last one seen.
		if total := s.Dropped(); total > last {
			s.reportOverload(Overload{
				Sink:     s.cfg.name,
				Delta:    total - last,
				Total:    total,
				Interval: s.cfg.overloadInterval,
			})
			last = total
		}
	}
}

// reportOverload calls OnOverload, or logs at Error by default, and recovers
// a panic in OnOverload.
func (s *Sink[T]) reportOverload(o Overload) {
	defer func() {
		if r := recover(); r != nil {
			s.logger().Error("sink: OnOverload panicked",
				"sink", s.cfg.name, "panic", fmt.Sprint(r))
		}
	}()
	if s.cfg.onOverload != nil {
		s.cfg.onOverload(o)
		return
	}
	s.logger().Error("sink: values dropped because rings were full",
		"sink", o.Sink, "delta", o.Delta, "total", o.Total, "interval", o.Interval)
}
