package sink

// Stats is a snapshot of a sink's counters, from [Sink.Stats]. It marshals
// to JSON with snake_case keys, for expvar or a status page.
//
// Per shard, once producers and workers are quiet, Drained + Queued +
// Dropped is the number of pushes counted on it: each is taken for Drain,
// still in the ring, or dropped (refused, or under DropOldest accepted and
// later displaced, which counts as dropped too). Under DropNewest Drained +
// Queued is exactly the number of values accepted into the ring.
// DroppedForBytes and WaitedOut are parts of Dropped (disjoint: a PushWait
// refused for its size is not one that waited), and once the sink is quiet
// QueuedBytes is the sum of the sizes of the values Queued counts.
type Stats struct {
	Name         string `json:"name"`
	Shards       int    `json:"shards"`
	RingCapacity int    `json:"ring_capacity"` // the capacity of each shard's ring
	Dropped      uint64 `json:"dropped"`       // values dropped: refused (ring full or closed) or displaced (DropOldest); the sum of PerShard
	Queued       int    `json:"queued"`        // values waiting in the rings, not those already in a batch
	Drained      uint64 `json:"drained"`       // values taken from the rings for Drain; the sum of PerShard
	DrainPanics  uint64 `json:"drain_panics"`  // Drain calls that panicked or called runtime.Goexit; the sum of PerShard
	// DroppedForBytes counts, of Dropped, the pushes refused because
	// their shard's share of MaxQueuedBytes was spent; the rest of
	// Dropped are pushes into a ring full in slots or closed, and values
	// displaced by DropOldest. The sum of PerShard.
	DroppedForBytes uint64 `json:"dropped_for_bytes"`
	// QueuedBytes is what MaxQueuedBytes bounds: the sizes of the values
	// in the rings and in batches whose Drain call has not returned (0
	// without MaxQueuedBytes). The sum of PerShard.
	QueuedBytes int64 `json:"queued_bytes"`
	// WaitedOut counts, of Dropped, the PushWait calls ([Handle.PushWait],
	// [Sink.PushWait]) whose ctx ended before their shard had room: the
	// values a caller chose to wait for and still lost, as against those
	// refused at once because a ring was full. The sum of PerShard. As a
	// metric: a counter (sinkprom could name it
	// sink_pushwait_waited_out_total).
	WaitedOut uint64 `json:"waited_out"`
	// Waiting is the number of PushWait calls parked for room at the
	// snapshot, a gauge; the sum of PerShard.
	Waiting  int          `json:"waiting"`
	PerShard []ShardStats `json:"per_shard"` // one entry per shard, in shard order
}

// ShardStats is one shard's part of [Stats].
type ShardStats struct {
	Shard   int    `json:"shard"`
	Dropped uint64 `json:"dropped"` // pushes into this ring refused (full or closed) and values it displaced (DropOldest)
	Queued  int    `json:"queued"`  // values in this ring
	// Drained counts the values taken from this ring into a batch, by its
	// own worker or by a stealer. Every value taken is handed to a Drain
	// call, so this includes a batch in a Drain call still running and the
	// batches lost to a panic.
	Drained uint64 `json:"drained"`
	// DrainPanics counts the Drain calls of this shard's worker that
	// panicked or called runtime.Goexit; each lost its batch.
	DrainPanics uint64 `json:"drain_panics"`
	// DroppedForBytes counts, of Dropped, the pushes into this shard that
	// its share of MaxQueuedBytes refused.
	DroppedForBytes uint64 `json:"dropped_for_bytes"`
	// QueuedBytes is the sizes of this shard's values in its ring and in
	// batches whose Drain call has not returned, the shard's own worker's
	// or a stealer's (0 without MaxQueuedBytes).
	QueuedBytes int64 `json:"queued_bytes"`
	// WaitedOut counts, of Dropped, the PushWait calls on this shard
	// whose ctx ended before it had room.
	WaitedOut uint64 `json:"waited_out"`
	// Waiting is the number of PushWait calls parked for room in this
	// shard at the snapshot.
	Waiting int `json:"waiting"`
}

// Stats returns a snapshot of the counters and ring lengths. Each counter is
// read once, so the totals equal the sums of PerShard exactly; under
// concurrency the shards are read one after another, not at one instant.
// There is intentionally no count of accepted values: keeping one would put
// a shared write on every push. Count the true results of Push if you need
// it, or take Drained + Queued once the producers have stopped. Stats only
// loads counters and ring lengths, writes nothing that a push reads, and
// allocates the PerShard slice.
func (s *Sink[T]) Stats() Stats {
	st := Stats{
		Name:         s.cfg.name,
		Shards:       len(s.shards),
		RingCapacity: s.cfg.ringCapacity,
		PerShard:     make([]ShardStats, len(s.shards)),
	}
	for i := range s.shards {
		sh := &s.shards[i]
		// forBytes and waitedOut before dropped: a refusal adds to
		// dropped first, so the snapshot never has more of the first.
		forBytes := sh.forBytesCount()
		waitedOut := s.waitedOutCount(i)
		ss := ShardStats{
			Shard:           i,
			Dropped:         sh.droppedCount(),
			Queued:          sh.ring.Len(),
			Drained:         sh.popped.Load(),
			DrainPanics:     sh.panics.Load(),
			DroppedForBytes: forBytes,
			QueuedBytes:     sh.heldBytes(),
			WaitedOut:       waitedOut,
			Waiting:         s.waitingCount(i),
		}
		st.WaitedOut += ss.WaitedOut
		st.Waiting += ss.Waiting
		st.Dropped += ss.Dropped
		st.DroppedForBytes += ss.DroppedForBytes
		st.QueuedBytes += ss.QueuedBytes
		st.Queued += ss.Queued
		st.Drained += ss.Drained
		st.DrainPanics += ss.DrainPanics
		st.PerShard[i] = ss
	}
	return st
}

// droppedForBytes returns the pushes that byte budgets refused so far.
func (s *Sink[T]) droppedForBytes() uint64 {
	var total uint64
	for i := range s.shards {
		total += s.shards[i].forBytesCount()
	}
	return total
}

// queued returns the number of values in the rings.
func (s *Sink[T]) queued() int {
	n := 0
	for i := range s.shards {
		n += s.shards[i].ring.Len()
	}
	return n
}
