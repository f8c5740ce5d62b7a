package slogsink

import "log/slog"

// Stats is a snapshot of a handler's counters, from [Handler.Stats].
//
// Once Close has returned and [Handler.Done] is closed (at once, when
// Close returned nil), and nobody logs any more, the counts add up:
//
//	records handled = Written + Dropped + Errors + Abandoned + Empty
//	                  + LostOnDisk + OnDisk - Recovered
//
// (the last three are 0 without Options.SpillDir). [DroppedMessage]
// records are in none of them.
type Stats struct {
	// Written counts the records in Writes that succeeded.
	Written uint64 `json:"written"`
	// Dropped counts the records shed because their ring was full (below
	// KeepLevel, full but for the reserve) in slots or in bytes, and those
	// handled after Close.
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
	// that failed, panicked or called runtime.Goexit, or in a Format
	// handler (ReplaceAttr included) that returned an error, panicked or
	// called runtime.Goexit.
	Errors uint64 `json:"errors"`
	// Panics counts the recovered panics and runtime.Goexit calls, in the
	// writer, the Format handler (ReplaceAttr included) and OnError. The
	// first of each minute is logged through Options.Logger with its
	// stack.
	Panics uint64 `json:"panics"`
	// Abandoned counts the records that were accepted but not written
	// because Close's ctx ended first: those a drain worker gave up on,
	// and, once Done is closed, those left in the rings.
	Abandoned uint64 `json:"abandoned"`
	// Empty counts the records that the Format handler wrote no bytes for
	// (a Format handler that samples, say): there was nothing to write.
	Empty uint64 `json:"empty"`
	// Spilled, Recovered, LostOnDisk and OnDisk are the spill tier's
	// (Options.SpillDir): logsink.Stats says what each counts.
	Spilled    uint64 `json:"spilled"`
	Recovered  uint64 `json:"recovered"`
	LostOnDisk uint64 `json:"lost_on_disk"`
	OnDisk     int    `json:"on_disk"`
}

// Stats returns a snapshot of the counters. Each is read once; under
// concurrency they are read one after another, not at one instant. It
// allocates the DroppedByLevel map.
func (h *Handler) Stats() Stats { return Stats(h.c.w.Stats()) }
