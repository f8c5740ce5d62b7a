package logsink

import (
	"log/slog"

	"github.com/shardedsink/shardedsink/logsink/internal/engine"
)

// Stats is a snapshot of a Writer's counters, from [Writer.Stats].
//
// Once Close has returned and [Writer.Done] is closed (at once, when
// Close returned nil), and nobody logs any more, the counts add up:
//
//	records begun or written = Written + Dropped + Errors + Abandoned + Empty
//	                           + LostOnDisk + OnDisk - Recovered
//
// (the last three are 0 without Options.SpillDir). Drop reports are in
// none of them.
type Stats struct {
	// Written counts the records in Writes that succeeded.
	Written uint64 `json:"written"`
	// Dropped counts the records shed because their ring was full (below
	// KeepLevel, full but for the reserve) in slots or in bytes, and those
	// written after Close.
	Dropped uint64 `json:"dropped"`
	// DroppedForBytes counts, of Dropped, the records shed because their
	// shard's share of Options.MaxQueuedBytes was spent (below KeepLevel,
	// but for its reserve); the others found their ring full in slots, or
	// came after Close. Many of these say that MaxQueuedBytes is small
	// for the records, many of the others that RingCapacity is.
	DroppedForBytes uint64 `json:"dropped_for_bytes"`
	// WaitedOut counts, of Dropped, the records at or above KeepLevel
	// that waited Options.KeepWait for room and found none (disjoint from
	// DroppedForBytes). Many of these say that the destination stalls for
	// longer than KeepWait.
	WaitedOut uint64 `json:"waited_out"`
	// DroppedByLevel splits Dropped by level: the keys are slog.LevelDebug
	// (every level below Info), LevelInfo, LevelWarn and LevelError (every
	// level from Error up); a level that lost nothing has no key.
	DroppedByLevel map[slog.Level]uint64 `json:"dropped_by_level"`
	// Errors counts the records lost to an error or a panic: in a Write
	// to the destination that failed, panicked or called runtime.Goexit,
	// or in a front-end's formatting (slogsink's Format handler, zapsink's
	// encoder).
	Errors uint64 `json:"errors"`
	// Panics counts the recovered panics and runtime.Goexit calls, in the
	// destination, OnError, and a front-end's formatting of records and of
	// drop reports. The first of each minute is logged through
	// Options.Logger with its stack.
	Panics uint64 `json:"panics"`
	// Abandoned counts the records that were accepted but not written
	// because Close's ctx ended first: those a drain worker gave up on,
	// and, once Done is closed, those left in the rings.
	Abandoned uint64 `json:"abandoned"`
	// Empty counts the records that had no bytes (a front-end's formatter
	// that wrote none, an empty Write): there was nothing to write.
	Empty uint64 `json:"empty"`

	// The spill tier's figures (Options.SpillDir). Spilled counts the
	// records moved to disk while a Write was slow, and Recovered those
	// that an earlier Writer on the directory left and this one wrote
	// (they are in Written). LostOnDisk counts the records the tier lost
	// (a failed disk write, a corrupt record); OnDisk is the records on
	// disk now, which a Writer started on the directory after Close
	// writes first. Records shed because the budget was full are in
	// Dropped.
	Spilled    uint64 `json:"spilled"`
	Recovered  uint64 `json:"recovered"`
	LostOnDisk uint64 `json:"lost_on_disk"`
	OnDisk     int    `json:"on_disk"`
}

// Stats returns a snapshot of the counters. Each is read once; under
// concurrency they are read one after another, not at one instant. It
// allocates the DroppedByLevel map.
func (w *Writer) Stats() Stats {
	c := w.e.Counts()
	s := Stats{
		Written:         c.Written,
		DroppedForBytes: c.DroppedForBytes,
		WaitedOut:       c.WaitedOut,
		DroppedByLevel:  make(map[slog.Level]uint64),
		Errors:          c.Errors,
		Panics:          c.Panics,
		Abandoned:       c.Abandoned,
		Empty:           c.Empty,
		Spilled:         c.Spilled,
		Recovered:       c.Recovered,
		LostOnDisk:      c.LostOnDisk,
		OnDisk:          c.OnDisk,
	}
	levels := engine.DropLevels()
	for i, n := range c.Dropped {
		if n != 0 {
			s.DroppedByLevel[levels[i]] = n
			s.Dropped += n
		}
	}
	return s
}
