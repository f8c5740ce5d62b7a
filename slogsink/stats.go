package slogsink

import (
	"log/slog"
)

// levels is the number of level buckets that drops are counted in.
const levels = 4

// levelNames names the buckets: the slog level at the bottom of each.
var levelNames = [levels]string{"DEBUG", "INFO", "WARN", "ERROR"}

// levelBase is the lowest level of each bucket but the first, which takes
// every level below INFO.
var levelBase = [levels]slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError}

// levelIndex returns the bucket of l: DEBUG below INFO, INFO below WARN,
// WARN below ERROR, ERROR at and above it.
func levelIndex(l slog.Level) int {
	switch {
	case l < slog.LevelInfo:
		return 0
	case l < slog.LevelWarn:
		return 1
	case l < slog.LevelError:
		return 2
	default:
		return 3
	}
}

// Stats is a snapshot of a handler's counters, from [Handler.Stats].
//
// Once Close has returned and [Handler.Done] is closed (at once, when
// Close returned nil), and nobody logs any more, the counts add up:
//
//	records handled = Written + Dropped + Errors + Abandoned + Empty
//
// [DroppedMessage] records are in none of them.
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
}

// Stats returns a snapshot of the counters. Each is read once; under
// concurrency they are read one after another, not at one instant. It
// allocates the DroppedByLevel map.
func (h *Handler) Stats() Stats {
	c := h.c
	s := Stats{
		Written:        c.written.Load(),
		Errors:         c.failed.Load(),
		Panics:         c.panics.Load(),
		Abandoned:      c.abandoned.Load(),
		Empty:          c.empty.Load(),
		DroppedByLevel: make(map[slog.Level]uint64),
	}
	// forBytes before dropped: a drop for bytes adds to dropped first.
	for i := range c.shards {
		s.DroppedForBytes += c.shards[i].forBytes.Load()
	}
	for lv := range levels {
		n := c.closedDrops[lv].Load()
		for i := range c.shards {
			n += c.shards[i].dropped[lv].Load()
		}
		if n != 0 {
			s.DroppedByLevel[levelBase[lv]] = n
			s.Dropped += n
		}
	}
	select {
	case <-c.sink.Done():
		// The workers have exited: what is queued stays in the rings.
		for i := range c.shards {
			st := &c.shards[i]
			s.Abandoned += uint64(st.queued.Load() - st.markers.Load())
		}
	default:
	}
	return s
}
