package slogsink

import "github.com/shardedsink/shardedsink/logsink"

// Stats is a snapshot of a handler's counters, from [Handler.Stats]: the
// counters of the record writer under it, logsink.Stats, whose fields say
// what each counts. For a handler the records begun are the records
// handled; Errors counts, besides failed Writes, the records whose Format
// handler (ReplaceAttr included) returned an error, panicked or called
// runtime.Goexit; Panics counts those panics too; Empty counts the
// records the Format handler wrote no bytes for. Once Close has returned
// and [Handler.Done] is closed (at once, when Close returned nil), and
// nobody logs any more, the counts add up:
//
//	records handled = Written + Dropped + Errors + Abandoned + Empty
//	                  + LostOnDisk + OnDisk - Recovered
//
// (the last three are 0 without Options.SpillDir). [DroppedMessage]
// records are in none of them.
type Stats = logsink.Stats

// Stats returns a snapshot of the counters. Each is read once; under
// concurrency they are read one after another, not at one instant. It
// allocates the DroppedByLevel map.
func (h *Handler) Stats() Stats { return h.c.w.Stats() }
