package sink

import (
	"sync/atomic"
	"time"
)

// Stats is a snapshot of a sink's counters, from [Sink.Stats] or
// [Sink.ReadStats]. It marshals to JSON with snake_case keys, for expvar or
// a status page.
//
// Per shard, once producers and workers are quiet, Drained + Queued +
// Dropped is the number of pushes counted on it: each is taken for Drain,
// still in the ring, or dropped (refused, or under DropOldest accepted and
// later displaced, which counts as dropped too). Under DropNewest Drained +
// Queued is exactly the number of values accepted into the ring.
//
// Dropped has six disjoint reasons: DroppedForBytes, WaitedOut,
// DroppedAfterShutdown, Displaced and DroppedForDisk count five of them,
// and the rest, Dropped minus those five ([Stats.DroppedForSlots]), are
// pushes refused because every ring they tried was full in slots. Each
// drop is counted once, in its reason, and Dropped is their sum: every
// counter of a snapshot, the reasons, DroppedForSlots and Dropped alike,
// is at least what it was in any earlier snapshot (a snapshot may lag a
// drop in flight, never go back). Once the sink is quiet QueuedBytes is
// the sum of the sizes of the values Queued counts.
type Stats struct {
	Name         string `json:"name"`
	Shards       int    `json:"shards"`
	RingCapacity int    `json:"ring_capacity"` // the capacity of each shard's ring
	Dropped      uint64 `json:"dropped"`       // values dropped, for every reason; the sum of PerShard
	Queued       int    `json:"queued"`        // values waiting in the rings, not those already in a batch
	Drained      uint64 `json:"drained"`       // values taken from the rings for Drain; the sum of PerShard
	DrainPanics  uint64 `json:"drain_panics"`  // Drain calls that panicked or called runtime.Goexit; the sum of PerShard
	// DroppedForBytes counts, of Dropped, the pushes refused because
	// their shard's share of MaxQueuedBytes was spent (before Shutdown
	// began). The sum of PerShard.
	DroppedForBytes uint64 `json:"dropped_for_bytes"`
	// QueuedBytes is what MaxQueuedBytes bounds: the sizes of the values
	// in the rings and in batches whose Drain call has not returned (0
	// without MaxQueuedBytes). The sum of PerShard.
	QueuedBytes int64 `json:"queued_bytes"`
	// WaitedOut counts, of Dropped, the PushWait calls ([Handle.PushWait],
	// [Sink.PushWait]) whose ctx ended before their shard had room: the
	// values a caller chose to wait for and still lost, as against those
	// refused at once because a ring was full. The sum of PerShard.
	WaitedOut uint64 `json:"waited_out"`
	// Waiting is the number of PushWait calls parked for room at the
	// snapshot, a gauge; the sum of PerShard.
	Waiting int `json:"waiting"`
	// DroppedAfterShutdown counts, of Dropped, the pushes (Push or
	// PushWait) dropped once Shutdown had begun: from then on every ring
	// is closed and refuses every push. A push refused for a full ring as
	// Shutdown begins may be counted here, having been refused after it
	// began. The sum of PerShard.
	DroppedAfterShutdown uint64 `json:"dropped_after_shutdown"`
	// Displaced counts, of Dropped, the values that a push under
	// [DropOldest] displaced from a full ring (0 under DropNewest). The
	// sum of PerShard.
	Displaced uint64 `json:"displaced"`
	// Overloads is the number of overload reports the monitor made so far
	// (an [Overload] to OnOverload, or one Error record): checks, one per
	// OverloadInterval at most, that found values dropped since the one
	// before. A count of overload events, not of values.
	Overloads uint64 `json:"overloads"`
	// HandOffs counts the pushes that found their ring full while Drain
	// was not slow and parked for the worker (Config.HandOffWait), whether
	// they then went in or were shed (and counted in Dropped). The sum of
	// PerShard.
	HandOffs uint64 `json:"hand_offs"`
	// MaxDrainTime and MaxWorkerDelay tell a slow destination from a
	// worker short of CPU: the longest of the shards' recent figures (see
	// ShardStats).
	MaxDrainTime   time.Duration `json:"max_drain_time_ns"`
	MaxWorkerDelay time.Duration `json:"max_worker_delay_ns"`

	// The spill tier's figures (Config.Spill; all 0 without it).
	// Spilled counts the values moved from the rings to the tier, and
	// SpillDrained those of them read back and handed to Drain: this
	// sink's own values. Recovered counts the values an earlier sink on
	// the directory left that were handed to Drain (counted in Drained,
	// not in any push). SpillQueued is the values the tier holds now,
	// SpillBytes its files' bytes (a gauge).
	// DroppedForDisk counts, of Dropped, the pushes refused while the
	// tier could take nothing (its budget full, or off after a failed
	// write) and the values it lost (a failed write's, a Codec's error,
	// a corrupt record's); SpillLost is the second part of it, the values
	// the tier lost. SpillErrors counts failed disk and Codec
	// operations, SpillCorrupt the torn or corrupt segments and the
	// undecodable records of an earlier sink that were skipped.
	Spilled        uint64 `json:"spilled"`
	SpillDrained   uint64 `json:"spill_drained"`
	Recovered      uint64 `json:"recovered"`
	SpillQueued    int    `json:"spill_queued"`
	SpillBytes     int64  `json:"spill_bytes"`
	DroppedForDisk uint64 `json:"dropped_for_disk"`
	SpillLost      uint64 `json:"spill_lost"`
	SpillErrors    uint64 `json:"spill_errors"`
	SpillCorrupt   uint64 `json:"spill_corrupt"`

	PerShard []ShardStats `json:"per_shard"` // one entry per shard, in shard order
}

// ShardStats is one shard's part of [Stats].
type ShardStats struct {
	Shard   int    `json:"shard"`
	Dropped uint64 `json:"dropped"` // values dropped on this shard, for every reason
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
	// DroppedAfterShutdown counts, of Dropped, the pushes into this shard
	// dropped once Shutdown had begun.
	DroppedAfterShutdown uint64 `json:"dropped_after_shutdown"`
	// Displaced counts, of Dropped, the values displaced from this ring
	// under DropOldest.
	Displaced uint64 `json:"displaced"`
	// HandOffs counts the pushes into this shard that parked for its
	// worker (see Stats.HandOffs).
	HandOffs uint64 `json:"hand_offs"`
	// MaxDrainTime is the longest Drain call of this shard's worker in the
	// current and the previous OverloadInterval, the call still running
	// included: the destination's time. MaxWorkerDelay is the longest
	// that worker took, in the same span, to come back to its ring after
	// a Drain call returned with values still queued (a delay still going
	// on included): a worker that is runnable but not run, short of CPU,
	// shows here and not in MaxDrainTime. A ring that fills while
	// MaxDrainTime is long has a slow destination; one that fills while
	// MaxWorkerDelay is long and MaxDrainTime short has a starved worker
	// (see Config.HandOffWait).
	MaxDrainTime   time.Duration `json:"max_drain_time_ns"`
	MaxWorkerDelay time.Duration `json:"max_worker_delay_ns"`
	// DroppedForDisk, Spilled and SpillQueued are this shard's part of
	// Stats' (see there).
	DroppedForDisk uint64 `json:"dropped_for_disk"`
	Spilled        uint64 `json:"spilled"`
	SpillQueued    int    `json:"spill_queued"`
}

// DroppedForSlots returns the drops that no counter of their own counts:
// the pushes that every ring they tried refused for want of a slot,
// Dropped less DroppedForBytes, WaitedOut, DroppedAfterShutdown, Displaced
// and DroppedForDisk.
func (st Stats) DroppedForSlots() uint64 {
	return droppedForSlots(st.Dropped, st.DroppedForBytes, st.WaitedOut, st.DroppedAfterShutdown, st.Displaced, st.DroppedForDisk)
}

// DroppedForSlots returns the shard's drops for a ring full in slots, as
// [Stats.DroppedForSlots] does for the sink.
func (ss ShardStats) DroppedForSlots() uint64 {
	return droppedForSlots(ss.Dropped, ss.DroppedForBytes, ss.WaitedOut, ss.DroppedAfterShutdown, ss.Displaced, ss.DroppedForDisk)
}

// droppedForSlots is what the five counted reasons leave of dropped.
func droppedForSlots(dropped, forBytes, waitedOut, afterShutdown, displaced, forDisk uint64) uint64 {
	return dropped - forBytes - waitedOut - afterShutdown - displaced - forDisk
}

// Stats returns a snapshot of the counters and ring lengths. Each counter is
// read once, so the totals equal the sums of PerShard exactly; under
// concurrency the shards are read one after another, not at one instant.
// There is intentionally no count of accepted values: keeping one would put
// a shared write on every push. Count the true results of Push if you need
// it, or take Drained + Queued once the producers have stopped. Stats only
// loads counters and ring lengths (a shard's ring length and Drained under
// its consumer mutex, which a worker holds while it takes a batch, so that
// Drained + Queued never counts a batch twice), writes nothing that a push
// reads, and allocates the PerShard slice; [Sink.ReadStats] reuses one
// instead.
func (s *Sink[T]) Stats() Stats {
	var st Stats
	s.ReadStats(&st)
	return st
}

// ReadStats fills st with the snapshot that [Sink.Stats] returns, reusing
// st.PerShard's array when its capacity holds every shard: a caller that
// keeps st (a metrics collector scraping every few seconds) allocates
// nothing after the first call. Every field of st is overwritten; st must
// not be read by another goroutine while ReadStats runs. It panics with a
// nil st.
func (s *Sink[T]) ReadStats(st *Stats) {
	if st == nil {
		panic("sink: ReadStats with a nil *Stats")
	}
	per := st.PerShard
	if cap(per) < len(s.shards) {
		per = make([]ShardStats, len(s.shards))
	}
	*st = Stats{
		Name:         s.cfg.name,
		Shards:       len(s.shards),
		RingCapacity: s.cfg.ringCapacity,
		Overloads:    s.overloads.Load(),
		PerShard:     per[:len(s.shards)],
	}
	now := s.now()
	for i := range s.shards {
		sh := &s.shards[i]
		q := &s.waits[i]
		// Field by field into the slot: a ShardStats built on the stack
		// and copied in whole is read back by 16-byte moves from 8-byte
		// stores, which the CPU cannot forward (it doubled the cost).
		// Dropped is the sum of its reasons, each loaded once: every one
		// only grows, so no counter of a snapshot is below the last's.
		ss := &st.PerShard[i]
		forBytes := sh.forBytesCount()
		waitedOut := atomic.LoadUint64(&q.waitedOut)
		afterShutdown := atomic.LoadUint64(&q.afterShutdown)
		displaced := sh.displacedCount()
		waiting := int(atomic.LoadInt32(&q.n))
		queuedBytes := sh.heldBytes()
		// The shard's ledger under the consumer mutex, as Flush reads it
		// (ledger.go): the workers take and count under it, so Drained +
		// Queued (the values accepted) never counts a batch twice, which
		// a reader that took them apart would when a batch is taken
		// between its loads, and then go back.
		a := s.readAccount(i)
		queued := int(a.inRing)
		drained := a.handed + a.recovered
		spillQueued := int(a.onDisk())
		panics := sh.panics.Load()
		forDisk := s.droppedForDiskOn(i)
		dropped := sh.fullCount() + forBytes + waitedOut + afterShutdown + displaced + forDisk
		var handOffs uint64
		if s.handOffs != nil {
			handOffs = atomic.LoadUint64(&s.handOffs[i].parked)
		}
		drainTime, workerDelay := s.drains[i].recent(now)
		ss.HandOffs = handOffs
		ss.MaxDrainTime = drainTime
		ss.MaxWorkerDelay = workerDelay
		st.HandOffs += handOffs
		st.MaxDrainTime = max(st.MaxDrainTime, drainTime)
		st.MaxWorkerDelay = max(st.MaxWorkerDelay, workerDelay)
		ss.Shard = i
		ss.Dropped = dropped
		ss.Queued = queued
		ss.Drained = drained
		ss.DrainPanics = panics
		ss.DroppedForBytes = forBytes
		ss.QueuedBytes = queuedBytes
		ss.WaitedOut = waitedOut
		ss.Waiting = waiting
		ss.DroppedAfterShutdown = afterShutdown
		ss.Displaced = displaced
		ss.DroppedForDisk = forDisk
		ss.SpillQueued = spillQueued
		st.DroppedForDisk += forDisk
		st.SpillQueued += spillQueued
		ss.Spilled = a.spilled
		st.Spilled += a.spilled
		st.SpillDrained += a.drained
		st.Recovered += a.recovered
		st.SpillLost += a.lost
		st.Dropped += dropped
		st.DroppedForBytes += forBytes
		st.WaitedOut += waitedOut
		st.DroppedAfterShutdown += afterShutdown
		st.Displaced += displaced
		st.Waiting += waiting
		st.QueuedBytes += queuedBytes
		st.Queued += queued
		st.Drained += drained
		st.DrainPanics += panics
	}
	if s.spill != nil {
		s.spill.readStats(st)
	}
}

// droppedForBytes returns the pushes that byte budgets refused so far.
func (s *Sink[T]) droppedForBytes() uint64 {
	var total uint64
	for i := range s.shards {
		total += s.shards[i].forBytesCount()
	}
	return total
}

// queued returns the number of values in the rings and spill tiers.
func (s *Sink[T]) queued() int {
	n := 0
	for i := range s.shards {
		a := s.readAccount(i)
		n += int(a.inRing + a.onDisk())
	}
	return n
}
