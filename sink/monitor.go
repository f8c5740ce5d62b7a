package sink

import (
	"fmt"
	"log/slog"
	"time"
)

// Overload reports values dropped since the monitor's previous check.
type Overload struct {
	Sink  string // the sink's Name
	Delta uint64 // values dropped since the previous report (> 0)
	Total uint64 // values dropped since the sink was created
	// ForDisk is, of Delta, the values dropped for the spill tier
	// ([Stats].DroppedForDisk): pushes that their ring refused while the
	// shard's share of Spill.MaxBytes was full or a failed write had
	// turned the tier off, and values the tier lost. 0 without Spill.
	ForDisk uint64
	// Interval is the time the drops were counted over: the time since the
	// previous check, which is the OverloadInterval, or less for the last
	// check, made when Shutdown begins (or more, when a slow report made
	// the monitor miss ticks).
	Interval time.Duration
}

// monitor is the overload monitor's goroutine; it also keeps the steal
// watch (stealwatch.go) when its timer fires. Every OverloadInterval it sums
// the drop counters and, only when the total rose since the last check,
// reports the rise. The first check comes one interval after New (a check
// at New would always see a zero delta). Ticks missed while a report runs are
// dropped, not queued. When Shutdown begins, it makes a last check, so that
// the drops of the last, partial interval are reported too, and exits.
//
// last is the total seen at the previous check, and lastDisk the drops
// for the spill tier that the reports so far counted. An OnOverload (or a
// logger) that calls runtime.Goexit ends this goroutine; the deferred call
// then starts a new one that goes on from the same totals, so the monitor
// never stops before Shutdown and Shutdown never waits for a monitor that
// is gone.
func (s *Sink[T]) monitor(last, lastDisk uint64) {
	finished := false
	defer func() {
		if !finished {
			go s.monitor(last, lastDisk)
			return
		}
		s.exited()
	}()
	t := time.NewTicker(s.cfg.overloadInterval)
	defer t.Stop()
	var watch <-chan time.Time // nil, which blocks, without the steal watch
	if s.watchTimer != nil {
		watch = s.watchTimer.C
	}
	checked := time.Now()
	for {
		stopping := false
		select {
		case <-s.stop:
			stopping = true
		case <-t.C:
		case <-watch:
			s.watchFired()
			continue
		}
		// The counters only grow, so the total rose exactly when it
		// differs from the last one seen. last moves on before the report,
		// which may not return.
		now := time.Now()
		// The disk's drops before the total: each only grows, so the
		// total loaded after counts every disk drop loaded before.
		disk := s.droppedForDisk()
		if total := s.Dropped(); total > last {
			o := Overload{
				Sink:     s.cfg.name,
				Delta:    total - last,
				Total:    total,
				Interval: now.Sub(checked),
			}
			// At most Delta: a disk drop counted in the last total after
			// the last load of the disk's is this check's to report.
			o.ForDisk = min(disk-lastDisk, o.Delta)
			last, lastDisk = total, lastDisk+o.ForDisk
			s.overloads.Add(1)
			s.reportOverload(o)
		}
		for i := range s.drains {
			s.drains[i].rotate()
		}
		checked = now
		if stopping {
			if s.watchTimer != nil {
				s.watchTimer.Stop()
			}
			finished = true
			return
		}
	}
}

// reportOverload calls OnOverload, or logs at Error by default, and recovers
// a panic in OnOverload. A call of runtime.Goexit in OnOverload is logged
// before it ends the monitor's goroutine (which monitor then replaces).
func (s *Sink[T]) reportOverload(o Overload) {
	returned := false
	defer func() {
		if returned {
			return
		}
		if r := recover(); r != nil {
			s.log(slog.LevelError, "sink: OnOverload panicked",
				"sink", s.cfg.name, "panic", fmt.Sprint(r))
			return
		}
		s.log(slog.LevelError, "sink: OnOverload called runtime.Goexit; the overload monitor goes on in a new goroutine",
			"sink", s.cfg.name)
	}()
	if s.cfg.onOverload != nil {
		s.cfg.onOverload(o)
	} else {
		args := []any{"sink", o.Sink, "delta", o.Delta, "total", o.Total, "interval", o.Interval}
		if s.cfg.maxQueuedBytes > 0 {
			args = append(args, "dropped_for_bytes", s.droppedForBytes())
		}
		msg := "sink: values dropped because rings were full"
		if s.spill != nil {
			args = append(args, "dropped_for_disk", s.droppedForDisk())
			switch {
			case o.ForDisk == o.Delta:
				msg = "sink: values dropped for the spill tier"
			case o.ForDisk > 0:
				msg = "sink: values dropped because rings were full and for the spill tier"
			}
		}
		drainTime, workerDelay := s.recentDrains()
		cause := likelyCause(drainTime, workerDelay)
		switch {
		case o.ForDisk == o.Delta:
			cause = diskCause
		case o.ForDisk > 0:
			cause += "; and " + diskCause
		}
		args = append(args, "max_drain_time", drainTime, "max_worker_delay", workerDelay, "likely_cause", cause)
		s.log(slog.LevelError, msg, args...)
	}
	returned = true
}

// recentDrains returns the longest recent Drain call and worker delay of the
// shards (Stats.MaxDrainTime and Stats.MaxWorkerDelay).
func (s *Sink[T]) recentDrains() (drainTime, workerDelay time.Duration) {
	now := s.now()
	for i := range s.drains {
		d, l := s.drains[i].recent(now)
		drainTime, workerDelay = max(drainTime, d), max(workerDelay, l)
	}
	return drainTime, workerDelay
}

// diskCause is the overload report's likely cause of drops for the spill
// tier.
const diskCause = "the spill tier could take no more: its share of Spill.MaxBytes full behind a slow or stalled destination, or its writes failing (see Stats().SpillErrors and the tier's error records)"

// droppedForDisk returns the drops for the spill tier so far (0 without
// one).
func (s *Sink[T]) droppedForDisk() uint64 {
	var total uint64
	for i := range s.shards {
		total += s.droppedForDiskOn(i)
	}
	return total
}

// likelyCause names, for the overload report, the likelier reason why
// rings filled: a worker short of CPU when it came back to its ring later
// than its Drain calls took (and by more than SlowDrain), else a Drain
// slower than the pushes.
func likelyCause(drainTime, workerDelay time.Duration) string {
	if workerDelay > drainTime && workerDelay > SlowDrain {
		return "drain workers short of CPU (goroutines that push outnumber the cores and never block); the hand-off (Config.HandOffWait) waits for them unless it is off"
	}
	return "Drain slower than the pushes (a slow or stalled destination)"
}
