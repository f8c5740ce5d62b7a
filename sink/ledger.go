package sink

import (
	"fmt"
	"sync/atomic"
)

// This file is the one home of a shard's ledger: the account of the
// values a shard accepted, which the worker, the spiller, Flush, Stats
// and Shutdown all go through (issue 64 found the identity kept in six
// places, and its defects where they met).
//
// The identity, per shard, at any instant under the shard's consumer
// mutex (shard.mu), under which every count below is added to:
//
//	accepted = handed + inRing + onDisk + lost
//
//   - accepted: the values this sink's pushes put into the shard's ring.
//     No counter holds it (a push counts nothing): the identity defines it.
//   - handed: this sink's values handed to a batch, from the ring or from
//     the tier (shard.handed).
//   - inRing: the ring's length.
//   - onDisk: the tier's backlog, spilled - drained - lost: the values
//     moved out of the ring into the tier (spilled) and neither handed to
//     a batch from it (drained) nor lost; the spiller's carry is one.
//   - lost: the values the tier lost (a failed write's buffered records,
//     a value its Codec could not encode or decode, a segment that a
//     corrupt record cut short or that could not be read, what Shutdown
//     could not write).
//
// recovered, the values an earlier sink on the directory left that were
// handed to a batch, stands apart: it is in Stats' Drained (handed +
// recovered) and never in accepted, so that Flush waits for this sink's
// values and not for what an earlier one left. The drops (drops.go) stand
// apart too: a dropped value was never accepted. Once a sink is quiet,
// then, Drained + Queued + SpillQueued + SpillLost + Dropped = pushes +
// Recovered.
//
// Every count but inRing and onDisk only grows, and so does accepted;
// onDisk is never negative. The package's tests check both at every step
// that adds to a ledger (checkLedgers).

// diskLedger is the spill tier's part of a shard's ledger (spillShard):
// the counts of the identity above that only a shard with a tier has,
// each added to under shard.mu through the methods below and loaded by
// Stats.
type diskLedger struct {
	spilled, drained, recovered, lost atomic.Uint64
	// logLost is how many of the records that the shard's own log lost
	// (spill.Stats.Lost) lost counts already (countLogLosses).
	logLost uint64
}

// spill counts n values moved out of the ring into the tier.
func (d *diskLedger) spill(n uint64) {
	if n > 0 {
		d.spilled.Add(n)
	}
}

// drain counts n values of this sink's handed from the tier to a batch
// (the worker counts them in handed too).
func (d *diskLedger) drain(n uint64) {
	if n > 0 {
		d.drained.Add(n)
	}
}

// recover counts a value an earlier sink left, handed to a batch.
func (d *diskLedger) recover() { d.recovered.Add(1) }

// lose counts n values the tier lost.
func (d *diskLedger) lose(n uint64) { d.lost.Add(n) }

// backlog returns onDisk: the values the tier holds for the shard.
func (d *diskLedger) backlog() uint64 { return d.spilled.Load() - d.drained.Load() - d.lost.Load() }

// loseBacklog counts as lost what the tier still holds once its log was
// read to the end: what neither reached a batch nor was counted lost
// already (a failed write's records, a corrupt record's segment).
func (d *diskLedger) loseBacklog() { d.lost.Add(d.backlog()) }

// countLogLosses counts as lost the records that the shard's log says it
// lost (logLost, its spill.Stats.Lost) since the last call: the failed
// writes' buffered records, whoever wrote (an append, the reader catching
// up, a Sync), and a segment that the reader gave up as unreadable. Under
// shard.mu, as every other addition to lost, so that loseBacklog and this
// never count a record twice (the syncer once added a Sync's losses
// without the mutex, while a worker's sweep counted the same records).
func (d *diskLedger) countLogLosses(logLost uint64) {
	d.lost.Add(logLost - d.logLost)
	d.logLost = logLost
}

// account is a shard's ledger at one instant (accountOf).
type account struct {
	handed, inRing                    uint64
	spilled, drained, recovered, lost uint64
}

// onDisk returns the values the tier holds.
func (a account) onDisk() uint64 { return a.spilled - a.drained - a.lost }

// accepted returns the values this sink's pushes put into the shard: the
// identity.
func (a account) accepted() uint64 { return a.handed + a.inRing + a.onDisk() + a.lost }

// accountOf returns shard i's ledger. shard.mu is held.
func (s *Sink[T]) accountOf(i int) account {
	a := account{handed: s.shards[i].handed.Load(), inRing: uint64(s.shards[i].ring.Len())}
	if s.spill != nil {
		d := &s.spill.shards[i].ledger
		a.spilled, a.drained, a.recovered, a.lost = d.spilled.Load(), d.drained.Load(), d.recovered.Load(), d.lost.Load()
	}
	return a
}

// readAccount is accountOf under shard i's consumer mutex.
func (s *Sink[T]) readAccount(i int) account {
	sh := &s.shards[i]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return s.accountOf(i)
}

// settledOf returns the values of shard i that left it, handed to a batch
// or lost, read without the mutex (both only grow): Flush's progress,
// which it waits for to reach accepted.
func (s *Sink[T]) settledOf(i int) uint64 {
	n := s.shards[i].handed.Load()
	if s.spill != nil {
		n += s.spill.shards[i].ledger.lost.Load()
	}
	return n
}

// checkLedgers makes every step that adds to a ledger check it (checkLedger):
// set by the package's tests (export_test.go), false elsewhere.
var checkLedgers bool

// checkLedger, when checkLedgers is set, checks shard i's ledger against
// its last check: no count went down (inRing and onDisk aside), accepted
// did not, and onDisk is not negative. It panics with both accounts when
// one did. shard.mu is held. Without checkLedgers it is one load and a
// branch.
func (s *Sink[T]) checkLedger(i int) {
	if !checkLedgers {
		return
	}
	a := s.accountOf(i)
	last := &s.ledgerChecks[i]
	if a.spilled < a.drained+a.lost || a.handed < last.handed || a.spilled < last.spilled ||
		a.drained < last.drained || a.recovered < last.recovered || a.lost < last.lost ||
		a.accepted() < last.accepted() {
		panic(fmt.Sprintf("sink: shard %d's ledger went wrong: %+v (accepted %d) after %+v (accepted %d)",
			i, a, a.accepted(), *last, last.accepted()))
	}
	*last = a
}
