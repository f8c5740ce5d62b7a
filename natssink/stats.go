package natssink

import "github.com/shardedsink/shardedsink/sink"

// Stats is a snapshot of a Sink's counts, from [Sink.Stats]. It marshals to
// JSON with snake_case keys.
//
// Every value pushed is in exactly one place: Pushed == Dropped + Queued +
// InFlight + Acked + Failed, exactly once the sink is quiet (no push,
// publish or ack under way), and after a Shutdown that returned nil Queued
// and InFlight are zero, so Acked + Failed + Dropped == Pushed. With
// Config.Sink.Spill, the values an earlier sink left on the directory
// join them: Pushed + Recovered == Dropped + Queued + InFlight + Acked +
// Failed; and after a Shutdown whose ctx ended, Queued keeps the values
// it left on disk for the next sink (Rings.SpillQueued), through a later
// Shutdown too.
type Stats struct {
	Name string `json:"name"`
	// Pushed counts the calls of Push: Drained + Queued + Dropped of the
	// rings, so that a push touches no counter of its own.
	Pushed uint64 `json:"pushed"`
	// Dropped counts the values shed by full rings, or pushed once
	// Shutdown had begun (the rings' own count).
	Dropped uint64 `json:"dropped"`
	// WaitedOut counts, of Dropped, the PushWait calls whose ctx ended
	// before they found room.
	WaitedOut uint64 `json:"waited_out"`
	// Queued counts the values accepted and not yet published: in the
	// rings, on disk (Rings.SpillQueued, with Config.Sink.Spill), or
	// taken by a worker that waits for room (MaxInFlight).
	Queued uint64 `json:"queued"`
	// InFlight counts the values published and awaiting their ack or a
	// retry; at most MaxInFlight. InFlightBytes is their payloads' bytes,
	// at most about MaxInFlightBytes.
	InFlight      uint64 `json:"in_flight"`
	InFlightBytes uint64 `json:"in_flight_bytes"`
	// Acked counts the values the stream acknowledged: each is stored once.
	Acked uint64 `json:"acked"`
	// Duplicates counts the acks that said the stream already held the
	// value (its Nats-Msg-Id): a retry after a lost ack. Each is in Acked
	// once.
	Duplicates uint64 `json:"duplicates"`
	// Batched counts, of Acked, the values acked by a fast batch (see
	// Config.FastBatches): its flow acks and its commit. The stream does
	// not say which of them it already held, so they are not in
	// Duplicates.
	Batched uint64 `json:"batched"`
	// Failed counts the values given up: out of attempts or budget, a
	// permanent error, an Encode error, or given up by Shutdown. A value
	// whose acks were all lost may be in the stream and in Failed: one
	// whose ack timed out, or one of a fast batch that the server ended
	// before the sink had sent it all, with no attempt left (the
	// publisher drops a commit that comes before Close).
	Failed uint64 `json:"failed"`
	// Retried counts the publishes after a value's first.
	Retried uint64 `json:"retried"`
	// Recovered counts the values that an earlier sink left in the spill
	// directory (Config.Sink.Spill) and this one took for publishing: in
	// Acked, Failed, InFlight or Queued, not in Pushed. The tier's other
	// figures (Spilled, SpillDrained, SpillQueued, SpillBytes, DroppedForDisk,
	// SpillLost, SpillErrors, SpillCorrupt) are in Rings; DroppedForDisk
	// is part of Dropped.
	Recovered uint64 `json:"recovered"`
	// LastError is the reason of the latest failure, or "".
	LastError string `json:"last_error,omitempty"`
	// Rings is the underlying sink's snapshot (shards, per-shard counts).
	Rings sink.Stats `json:"rings"`
}

// Stats returns a snapshot of the counts, as [Sink.ReadStats] reads it. It
// allocates the per-shard slice of Rings.
func (s *Sink[T]) Stats() Stats {
	var st Stats
	s.ReadStats(&st)
	return st
}

// ReadStats fills st with a snapshot of the counts. Each is read once, in
// an order that keeps Queued from counting a value twice: a value moves
// from the rings to a worker to a slot to Acked or Failed, and the later
// places are read first. It writes every field of st and reuses the
// per-shard slice of st.Rings (see [sink.Sink.ReadStats]), so that reading
// into the same Stats again allocates nothing; LastError's text is made
// once per failure, not per read. A scrape that keeps a Stats to read into
// pays no allocation for the snapshot.
func (s *Sink[T]) ReadStats(st *Stats) {
	batched := s.batched.Load() // before acked, which a batch's ack adds to after it
	acked, failed := s.acked.Load(), s.failed.Load()
	inflight := s.inflight.Load()
	st.Name = s.cfg.name
	st.Acked = acked
	st.Duplicates = s.duplicates.Load()
	st.Batched = batched
	st.Failed = failed
	st.Retried = s.retried.Load()
	st.InFlight = uint64(max(inflight, 0))
	st.InFlightBytes = uint64(max(s.pool.bytes.Load(), 0))
	s.sink.ReadStats(&st.Rings)
	r := &st.Rings
	// Drained counts the values taken for Drain, from the rings or the
	// spill tier, the recovered ones included: each is settled, in a
	// slot, or with a worker that waits for a slot. SpillQueued is the
	// values this sink moved to disk and has not taken back.
	recovered := min(r.Recovered, r.Drained) // read apart: keep the difference from going round
	st.Recovered = recovered
	st.Pushed = r.Drained - recovered + uint64(r.Queued) + uint64(r.SpillQueued) + r.Dropped
	st.Dropped = r.Dropped
	st.WaitedOut = r.WaitedOut
	st.Queued = uint64(r.Queued) + uint64(r.SpillQueued)
	if out := acked + failed + uint64(inflight); r.Drained > out {
		st.Queued += r.Drained - out
	}
	st.LastError = s.reporter.lastErrorText()
}
