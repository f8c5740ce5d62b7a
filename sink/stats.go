package sink

// Stats is a snapshot of a sink's counters, from [Sink.Stats]. It marshals
// to JSON with snake_case keys, for expvar or a status page.
type Stats struct {
	Name     string       `json:"name"`
	Shards   int          `json:"shards"`
	Dropped  uint64       `json:"dropped"`   // values dropped because a ring was full; the sum of PerShard
	Queued   int          `json:"queued"`    // values waiting in the rings, not those already in a batch
	PerShard []ShardStats `json:"per_shard"` // one entry per shard, in shard order
}

// ShardStats is one shard's part of [Stats].
type ShardStats struct {
	Shard   int    `json:"shard"`
	Dropped uint64 `json:"dropped"`
	Queued  int    `json:"queued"`
}

// Stats returns a snapshot of the drop counters and ring lengths. Each
// counter is read once, so Dropped and Queued equal the sums of PerShard
// exactly; under concurrency the shards are read one after another, not at
// one instant. There is intentionally no count of accepted values: keeping
// one would put a shared write on every push. Count the true results of Push
// if you need it. Stats allocates the PerShard slice.
func (s *Sink[T]) Stats() Stats {
	st := Stats{
		Name:     s.cfg.name,
		Shards:   len(s.shards),
		PerShard: make([]ShardStats, len(s.shards)),
	}
	for i := range s.shards {
		sh := &s.shards[i]
		ss := ShardStats{Shard: i, Dropped: sh.droppedCount(), Queued: sh.ring.Len()}
		st.Dropped += ss.Dropped
		st.Queued += ss.Queued
		st.PerShard[i] = ss
	}
	return st
}

// queued returns the number of values in the rings.
func (s *Sink[T]) queued() int {
	n := 0
	for i := range s.shards {
		n += s.shards[i].ring.Len()
	}
	return n
}
