package engine

import (
	"log/slog"
	"time"
)

// Settings is a Writer's configuration with every value resolved:
// package logsink's Options after its defaults and checks (Options.settle
// there), which say what each field does.
type Settings struct {
	Name string
	// Level is the level of Write's records; records at or above
	// KeepLevel are shed last and may wait KeepWait for room (0: never).
	Level, KeepLevel slog.Level
	KeepWait         time.Duration
	// The sink's sizes; BatchSize is clamped to RingCapacity. MaxDelay 0:
	// write at once.
	Shards, RingCapacity, BatchSize int
	MaxDelay                        time.Duration
	MaxQueuedBytes                  int // 0: no bound
	DisableHandOff                  bool
	// The spill tier, when SpillDir is set.
	SpillDir   string
	SpillSync  time.Duration
	SpillBytes int64
	// Report formats the drop reports (nil: JSONReport); OnError gets the
	// errors (nil: none); Logger the panic reports.
	Report  func(Drops) *Record
	OnError func(error)
	Logger  *slog.Logger

	lowLimit   int64 // the ring length up to which records below KeepLevel are accepted
	assistMark int64 // the ring length above which a caller yields before it logs
}

// admissionLimit is the most records a shard's queued may count (see
// shardCounts) for a record of level l to be admitted: the ring's
// capacity at or above KeepLevel, lowLimit below it, the rest being the
// reserve of the records that matter.
func (s *Settings) admissionLimit(l slog.Level) int64 {
	if l >= s.KeepLevel {
		return int64(s.RingCapacity)
	}
	return s.lowLimit
}
