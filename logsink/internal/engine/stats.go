package engine

// Counts is a snapshot of a Writer's counters, each what the field of
// logsink.Stats of the same name counts; Dropped is by level bucket, in
// the order of DropLevels.
type Counts struct {
	Written, DroppedForBytes, WaitedOut uint64
	Dropped                             [levels]uint64
	Errors, Panics, Abandoned, Empty    uint64
	Spilled, Recovered, LostOnDisk      uint64
	OnDisk                              int
}

// Counts returns a snapshot of the counters. Each is read once; under
// concurrency they are read one after another, not at one instant.
func (w *Writer) Counts() Counts {
	c := Counts{
		Written:   w.written.Load(),
		Errors:    w.failed.Load(),
		Panics:    w.panics.Load(),
		Abandoned: w.abandoned.Load(),
		Empty:     w.empty.Load(),
	}
	// forBytes and waitedOut before dropped: a drop for bytes, and one
	// that waited out, adds to dropped first.
	for i := range w.shards {
		c.DroppedForBytes += w.shards[i].forBytes.Load()
		for lv := range levels {
			c.WaitedOut += w.shards[i].waitedOut[lv].Load()
		}
	}
	for lv := range levels {
		c.Dropped[lv] = w.closedDrops[lv].Load()
		for i := range w.shards {
			c.Dropped[lv] += w.shards[i].dropped[lv].Load()
		}
	}
	if w.opts.SpillDir != "" {
		ss := w.sink.Stats()
		c.Spilled, c.Recovered, c.LostOnDisk, c.OnDisk = ss.Spilled, ss.Recovered, ss.SpillLost, ss.SpillQueued
	}
	select {
	case <-w.sink.Done():
		// The workers have exited: what is queued stays in the rings.
		for i := range w.shards {
			st := &w.shards[i]
			c.Abandoned += uint64(st.counts.queued() - st.markers.Load())
		}
	default:
	}
	return c
}
