package engine

import (
	"cmp"
	"log/slog"
	"os"
	"time"
)

// defaults fills the zero fields of s that the tests leave to logsink's
// defaults (logsink.Options.settle applies them for a user): 2 shards of
// 8192 records, batches of 1024, MaxDelay 100 µs, KeepLevel WARN, KeepWait
// 1 ms, 64 MiB of MaxQueuedBytes, a 1 GiB spill budget, a text logger on
// os.Stderr.
func defaults(s Settings) Settings {
	s.Name = cmp.Or(s.Name, "logsink")
	s.Shards = cmp.Or(s.Shards, 2)
	s.RingCapacity = cmp.Or(s.RingCapacity, 8192)
	s.BatchSize = cmp.Or(s.BatchSize, 1024)
	s.MaxDelay = cmp.Or(s.MaxDelay, 100*time.Microsecond)
	s.KeepLevel = cmp.Or(s.KeepLevel, slog.LevelWarn)
	s.KeepWait = cmp.Or(s.KeepWait, time.Millisecond)
	s.MaxQueuedBytes = cmp.Or(s.MaxQueuedBytes, 64<<20)
	s.SpillBytes = cmp.Or(s.SpillBytes, 1<<30)
	if s.Logger == nil {
		s.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return s
}
