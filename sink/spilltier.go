package sink

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/internal/limit"
	"github.com/shardedsink/shardedsink/sink/spill"
)

// The spill tier: what a sink with Config.Spill does with the values its
// rings cannot take because Drain is behind. This file is the protocol's
// one home; the package doc ("The spill tier") says what it guarantees.
//
// Each shard has a segment log of its own (package spill), in
// Dir/shard-NNNN. One goroutine per sink, the spiller, moves values from
// the head of a ring to the tail of its shard's log, under the shard's
// consumer mutex (shard.mu), while the ring is a quarter full or pushes are
// parked on it and either the shard's destination is slow (drainstate.go:
// a Drain call of the shard, or with a callTimer any worker's call into
// the destination, longer than SlowDrain; with the hand-off off, any
// Drain call of the shard in progress) or the
// tier still holds values (the worker hands those to Drain first, and
// the pushes would otherwise wait for all of them).
// Producers never touch the disk: a push is still one TryPush, and only a
// push that its ring refused looks at the tier (to count its drop for the
// disk when the tier is full, or to park while the spiller takes, which
// pushes the parked values into the room it makes: handoff.go).
//
// Order. Under shard.mu the tier holds the shard's oldest values and the
// ring the newer ones: the spiller only ever moves the ring's head to the
// log's tail. So the shard's worker, under the same mutex, takes from the
// tier first (its log, after any log an earlier sink with more shards
// left, and then the one value the spiller popped and could not write,
// the carry) and from the ring only once the tier is empty; and no other
// worker steals from a shard whose tier holds values (hasDisk). A
// Handle's values keep their order; a shard's values reach Drain in the
// order they were accepted, across memory and disk.
//
// Accounting: each shard's ledger (ledger.go, the identity's one home)
// has the tier's counts in diskLedger, added to under shard.mu: a value
// moved out of the ring is spilled, one handed from the tier to a batch
// drained (and handed, by the worker), one the tier lost lost, and one an
// earlier sink on the directory left recovered.
//
// Faults. A full budget (spill.ErrFull) blocks the shard's tier until
// Drain catches up and the files it finished give the share room again
// (reclaimAll), or the spiller's next write succeeds; a failed write
// turns it off for spillRetry; either way the value the spiller holds
// stays in the carry, pushes that the ring refuses meanwhile are counted
// as dropped for the disk, and the spiller tries again. A failed write is logged at most once per
// spillRetry. A read that fails is tried again a few times, and then the
// log gives up the segment (spill.ReadError): replay counts the values
// in it as lost at once (countLogLosses), and the worker goes on with the
// rest of the tier and then the ring, as it does past a write the log
// made for the reader and lost (spill.WriteError, which pauses the tier
// as a failed write of the spiller's does). Nothing the disk does stops
// the sink or a producer.

// Codec turns values into bytes for the spill tier and back
// ([Config.Spill]). The sink calls Append once for each value it moves
// to the tier, and Decode once for each record it reads back. It must be
// safe for use by the spiller and the drain workers at once, must not
// keep dst or p, and must not panic. The sink does not use a value after
// its Append returns, whatever Append returns: Append may recycle it
// (logsink's returns its records to their pool).
type Codec[T any] interface {
	// Append appends the encoding of v to dst and returns the extended
	// slice. An error drops v (counted in Stats.DroppedForDisk).
	Append(dst []byte, v T) ([]byte, error)
	// Decode returns the value that p, an encoding that Append made,
	// stands for. p is valid only during the call: a value that refers
	// to bytes must copy them. An error drops the record (counted).
	Decode(p []byte) (T, error)
}

// BytesCodec is the [Codec] of []byte values: a record is the bytes
// themselves, and Decode copies them.
type BytesCodec struct{}

// Append appends v to dst.
func (BytesCodec) Append(dst, v []byte) ([]byte, error) { return append(dst, v...), nil }

// Decode returns a copy of p.
func (BytesCodec) Decode(p []byte) ([]byte, error) {
	// make and copy, which the compiler turns into one allocation that it
	// does not clear first: cheaper than bytes.Clone's append.
	v := make([]byte, len(p))
	copy(v, p)
	return v, nil
}

// StringCodec is the [Codec] of string values.
type StringCodec struct{}

// Append appends v to dst.
func (StringCodec) Append(dst []byte, v string) ([]byte, error) { return append(dst, v...), nil }

// Decode returns p as a string.
func (StringCodec) Decode(p []byte) (string, error) { return string(p), nil }

// Spill configures the spill tier ([Config.Spill]): a directory on disk
// behind the rings, to which values that a slow Drain leaves in a ring
// are moved instead of being shed, and from which Drain gets them back in
// order. The zero value (no Dir) leaves the tier off.
//
// While a Drain call of a shard runs longer than [SlowDrain], or the
// shard's tier still holds values, and its ring is a quarter full (or
// pushes are parked on it), the sink's spiller goroutine moves the ring's
// values to the shard's segment log (package sink/spill); a push into the
// full ring parks meanwhile, as in the hand-off (the package doc, "What a
// push waits for"). The shard's worker hands the log's values to Drain
// before the ring's, and no worker steals from a shard whose values are
// on disk, so a shard's values reach Drain in the order they were
// accepted (a Handle's keep theirs). Only a push that its ring refused
// looks at the tier.
//
// A failed write (ENOSPC, EIO, a directory that went away) is logged at
// most once a second and sheds the shard's pushes for a second; the values
// it, the Codec or a corrupt record lose are counted (Stats().SpillLost).
// Every record carries a CRC-32C: a torn or corrupt one ends its
// segment's valid part and is counted (Stats().SpillCorrupt). A Shutdown
// whose ctx ends before its drain is done moves what the rings still hold
// to disk, syncs and closes the tier: those values go to the next sink on
// the directory, not to a later Shutdown (what a full tier cannot take
// then is counted in DroppedForDisk and SpillLost). The tier cannot be
// combined with DropOldest; under MaxQueuedBytes a spilled value's bytes
// go back to the budget, and a value read back holds none.
//
// The tier costs a successful push nothing and a worker one atomic load
// per Drain call; spilling costs an encode and an append per value on the
// spiller, reading back a read and a decode per value on the worker (go
// test -run '^$' -bench '^BenchmarkSpill$' ./sink/).
type Spill[T any] struct {
	// Dir is the tier's directory, created 0700 if need be (files 0600).
	// It is the sink's alone: New takes an exclusive lock on each shard's
	// subdirectory, so that a second sink or process on it gets an error
	// wrapping spill.ErrLocked. A sink started on a directory that an
	// earlier one left values in hands those to Drain first
	// (Stats.Recovered).
	Dir string
	// MaxBytes is the disk budget, split evenly over the shards (at least
	// MinSpillShardBytes each). A shard whose share is full stops
	// spilling until Drain catches up; pushes that its ring refuses
	// meanwhile are counted in Stats.DroppedForDisk. Required with Dir.
	MaxBytes int64
	// Codec encodes values for the disk. Required with Dir.
	Codec Codec[T]
	// SyncInterval is how often the spilled segments (and how far Drain
	// has got in them) are fsynced: what a crash of the process or the
	// machine can lose of what was spilled. Default DefaultSpillSync.
	SyncInterval time.Duration
}

const (
	// DefaultSpillSync is the default Spill.SyncInterval: a crash loses
	// at most about a second of what was spilled.
	DefaultSpillSync = time.Second
	// MinSpillShardBytes is the least share of Spill.MaxBytes per shard:
	// one segment of the smallest size (spill.MinSegmentBytes).
	MinSpillShardBytes = spill.MinSegmentBytes
)

// The spiller's pace.
const (
	// spillPoll is how often the spiller looks at the rings while some
	// Drain call is in progress, pushes are parked or a tier holds values.
	spillPoll = time.Millisecond
	// spillLinger is how long the spiller keeps looking every spillPoll
	// after it last found a Drain call in progress or a push parked, or
	// was rung, before it sleeps until it is rung again. With the hand-off
	// off a worker rings it as each Drain call begins, and a healthy
	// sink's Drain calls are short and many: a spiller that slept as soon
	// as it found none in progress was rung 128,000 times a second (-bench
	// '^BenchmarkSpill$/healthy/tier=on' ./sink/, counted with a temporary
	// counter, when every sink rang it so); one more look first makes
	// that 270, and a sink whose Drain calls are rare pays one look for
	// each.
	spillLinger = spillPoll
	// spillChunk is the most values it moves under one hold of a shard's
	// consumer mutex.
	spillChunk = 256
	// spillRetry is how long a failed write turns a shard's tier off.
	spillRetry = time.Second
)

// spillTier is a sink's spill tier; nil when Config.Spill is off.
type spillTier[T any] struct {
	codec     Codec[T]
	syncEvery time.Duration
	shards    []spillShard
	// sleeping is 1 while the spiller sleeps with no Drain call in
	// progress and no push parked; what may need it loads sleeping and
	// rings bell: a push that parks (the hand-off, PushWait), and, with
	// the hand-off off, a worker that begins a Drain call (with it on,
	// a slow Drain call leaves its ring to the hand-off until a push
	// parks, so a healthy sink's Drain calls do not wake the spiller:
	// see spillLinger). The Dekker pairs: the worker stores
	// drainState.start, a hand-off push raises its queue's n, before it
	// loads sleeping; the spiller stores sleeping before its last look at
	// the starts and the queues. A PushWait caller parks only beside a
	// full ring, while a Drain call is in progress or about to begin, and
	// rings after its enqueue: the spiller either sees that call's start
	// (and does not sleep) or slept before the caller's load.
	sleeping atomic.Uint32
	bell     chan struct{}
	exited   chan struct{} // closed when the spiller's goroutine returns
	// reclaimDue rings the reclaimer goroutine: a worker marked segments
	// done (see reclaimAll). reclaimMu is held while their files are
	// removed, by the reclaimer or by Flush.
	reclaimDue chan struct{}
	reclaimMu  sync.Mutex
	// unsynced is set by an append or a worker's done, and cleared by the
	// spiller's sync.
	unsynced atomic.Bool
	enc      []byte // the spiller's encoding buffer
	// ended is set by close; only Shutdown, holding shutdownSem, reads
	// and writes it.
	ended   bool
	errors  atomic.Uint64
	reports limit.Every // the turn of the fault reports
	// undecodable counts the records an earlier sink left that the Codec
	// could not decode.
	undecodable atomic.Uint64
}

// spillShard is one shard's part of the tier.
type spillShard struct {
	own *spill.Log // this shard's log: appends go here
	// earlier are the logs of shards that an earlier sink on the
	// directory had and this one has not (it had more shards), read
	// before own; spent are those read to the end, removed at the next
	// done. Under shard.mu.
	earlier, spent []*spill.Log
	// hasDisk is set while the tier may hold values of this shard:
	// written under shard.mu, loaded without it by the spiller (see takes).
	// carry, under shard.mu, is the record of a value the spiller popped
	// and encoded but could not write yet (full, or off): the tier's
	// newest.
	hasDisk  atomic.Bool
	carrying bool
	carry    []byte
	// closed is set, under shard.mu, once Shutdown has closed the logs:
	// what they hold is the next sink's.
	closed bool
	// offUntil is when a failed write's pause ends (Sink.now), 0 once the
	// spiller has seen it pass (takes): set by the spiller and the
	// syncer, read by the spiller and by pushes that their ring refused
	// (refuses).
	offUntil atomic.Int64
	// full is 1 from an append that the shard's share of the budget
	// refused (spill.ErrFull) until the share has room again: the
	// spiller's next write succeeds, or the reclaimer, having given back
	// the files of done segments, finds room for the carry (reclaimAll).
	// Written under shard.mu. refused counts the pushes dropped for the
	// disk while the tier refuses (refuses). Pushes that their ring
	// refused read full and add to refused, so they are plain integers
	// used only through sync/atomic's functions (see shard's "Atomics"
	// note), with refused 8-byte aligned on 32-bit platforms.
	_       [0]atomic.Uint64
	refused uint64
	full    uint32
	// ledger is the tier's part of the shard's ledger (ledger.go),
	// written under shard.mu.
	ledger diskLedger
}

// countLogLosses counts as lost the records that the shard's own log
// lost since the last call (diskLedger.countLogLosses). shard.mu is held.
func (ts *spillShard) countLogLosses() { ts.ledger.countLogLosses(ts.own.Stats().Lost) }

// refuses reports whether the shard's tier takes none of its values now
// (epoch is the sink's, for Sink.now): its share of the budget is full,
// or a failed write turned it off for spillRetry. A push that its ring
// refused asks; it reads the clock only during a pause, or after one
// until the spiller has seen it pass.
func (ts *spillShard) refuses(epoch time.Time) bool {
	if atomic.LoadUint32(&ts.full) != 0 {
		return true
	}
	u := ts.offUntil.Load()
	return u != 0 && u > sinceEpoch(epoch)
}

// shardDir returns the directory of shard i's log under dir.
func shardDir(dir string, i int) string { return filepath.Join(dir, fmt.Sprintf("shard-%04d", i)) }

// openSpill opens the tier of a sink with st's settings: a log per shard,
// and the logs of shards an earlier sink had beyond st.shards, each given
// to the shard its number maps to. On an error it closes what it opened.
func openSpill[T any](st settings[T]) (_ *spillTier[T], err error) {
	cfg := st.spill
	t := &spillTier[T]{
		codec:      cfg.Codec,
		syncEvery:  cfg.SyncInterval,
		shards:     make([]spillShard, st.shards),
		bell:       make(chan struct{}, 1),
		exited:     make(chan struct{}),
		reclaimDue: make(chan struct{}, 1),
	}
	defer func() {
		if err != nil {
			t.closeLogs()
		}
	}()
	opts := spill.Options{MaxBytes: cfg.MaxBytes / int64(st.shards)}
	for i := range t.shards {
		if t.shards[i].own, err = spill.Open(shardDir(cfg.Dir, i), opts); err != nil {
			return nil, fmt.Errorf("sink %q: Spill.Dir: %w", st.name, err)
		}
		t.shards[i].hasDisk.Store(t.shards[i].own.Stats().Segments > 0)
	}
	entries, err := os.ReadDir(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("sink %q: Spill.Dir: %w", st.name, err)
	}
	for _, e := range entries {
		n, ok := strings.CutPrefix(e.Name(), "shard-")
		i, perr := strconv.Atoi(n)
		if !ok || perr != nil || i < st.shards || !e.IsDir() {
			continue
		}
		l, err := spill.Open(filepath.Join(cfg.Dir, e.Name()), opts)
		if err != nil {
			return nil, fmt.Errorf("sink %q: Spill.Dir: %w", st.name, err)
		}
		ts := &t.shards[i%st.shards]
		ts.earlier = append(ts.earlier, l)
		ts.hasDisk.Store(true)
	}
	return t, nil
}

// closeLogs syncs and closes every log, and returns the first error.
func (t *spillTier[T]) closeLogs() error {
	var first error
	for i := range t.shards {
		ts := &t.shards[i]
		for _, l := range append(append([]*spill.Log{ts.own}, ts.earlier...), ts.spent...) {
			if l == nil {
				continue
			}
			if err := l.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// wake rings the spiller's bell when it sleeps: one atomic load when it
// does not.
func (t *spillTier[T]) wake() {
	if t.sleeping.Load() != 0 {
		select {
		case t.bell <- struct{}{}:
		default:
		}
	}
}

// run is the spiller's goroutine: every spillPoll while some Drain call
// is in progress or pushes are parked, and spillLinger after, it moves
// to disk the values of the shards whose tier takes them and that are
// due (see takes and due); every SyncInterval it has its syncer
// goroutine sync what changed; otherwise it sleeps until it is rung (see
// sleeping). It returns when the sink reaches phaseStopping, once the
// syncer has returned too.
func (t *spillTier[T]) run(s *Sink[T]) {
	defer close(t.exited)
	// The syncs run on a goroutine of their own: an fsync takes tens of
	// milliseconds, and the pushes parked on the spiller's moves would
	// wait for it (a 200-byte value spilled through a stalled Drain,
	// -bench '^BenchmarkSpill$/stalled' ./sink/: 347 ns with the fsyncs on
	// this goroutine, 237 ns with the syncer).
	syncDue := make(chan struct{}, 1)
	synced := make(chan struct{})
	go t.syncer(s, syncDue, synced)
	reclaimed := make(chan struct{})
	go t.reclaimer(s, reclaimed)
	defer func() { <-synced; <-reclaimed }()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	lastSync := s.now()
	lastBusy := lastSync
	for {
		now := s.now()
		busy := t.pass(s, now)
		if t.unsynced.Load() && now-lastSync >= int64(t.syncEvery) {
			select {
			case syncDue <- struct{}{}:
			default: // the last one is still due
			}
			lastSync = now
		}
		var wait time.Duration
		if busy {
			lastBusy = now
		}
		if now-lastBusy < int64(spillLinger) {
			wait = spillPoll
		} else {
			t.sleeping.Store(1)
			if t.busy(s) {
				t.sleeping.Store(0)
				continue
			}
		}
		if t.unsynced.Load() {
			next := time.Duration(lastSync + int64(t.syncEvery) - s.now())
			if wait == 0 || next < wait {
				wait = max(next, time.Microsecond)
			}
		}
		var tick <-chan time.Time
		if wait > 0 {
			timer.Reset(wait)
			tick = timer.C
		}
		select {
		case <-t.bell:
			lastBusy = s.now() // a push parked, or a Drain call began
		case <-tick:
		case <-s.stop:
			timer.Stop()
			return
		}
		timer.Stop()
		t.sleeping.Store(0)
	}
}

// pass moves the values of every shard that is due, and reports whether
// any Drain call is in progress or any push parked.
func (t *spillTier[T]) pass(s *Sink[T], now int64) (busy bool) {
	for i := range s.shards {
		busy = busy || t.busyOn(s, i)
		takes := t.takes(s, i, now)
		if s.handOffs != nil {
			s.handOffs[i].setSpilling(takes)
		}
		if takes && t.due(s, i) {
			t.move(s, i, false)
		}
	}
	return busy
}

// busy reports whether any Drain call is in progress, any push parked or
// any tier holds values.
func (t *spillTier[T]) busy(s *Sink[T]) bool {
	for i := range s.shards {
		if t.busyOn(s, i) {
			return true
		}
	}
	return false
}

// busyOn reports whether a Drain call of shard i is in progress, a push
// parked on it or its tier holds values: the spiller looks every
// spillPoll while one is.
func (t *spillTier[T]) busyOn(s *Sink[T], i int) bool {
	return atomic.LoadInt64(&s.drains[i].start) != 0 || s.handOffsParked(i) || t.shards[i].hasDisk.Load()
}

// takes reports whether shard i's tier takes the shard's values at now:
// it is not paused by a failed write, and either the shard's destination
// is slow (Sink.drainSlow; with the hand-off off, any Drain call in
// progress counts: with it on, a destination that is not slow leaves a
// full ring to the hand-off, which parks the pushes until the worker
// takes), or the tier still holds values: the worker hands those to
// Drain first, and the pushes would wait for all of them.
func (t *spillTier[T]) takes(s *Sink[T], i int, now int64) bool {
	ts := &t.shards[i]
	if u := ts.offUntil.Load(); u != 0 {
		if u > now {
			return false
		}
		// The pause is over: refuses reads no clock from now on. A pause
		// that the syncer began meanwhile stands (the swap fails).
		ts.offUntil.CompareAndSwap(u, 0)
	}
	slow := s.drainSlow(i, now) || s.cfg.handOffWait == 0 && atomic.LoadInt64(&s.drains[i].start) != 0
	return slow || ts.hasDisk.Load()
}

// due reports whether shard i's ring, whose tier takes its values
// (takes), should spill now: it holds values, and it is a quarter full or
// pushes are parked on it. A quarter bounds what a crash in a stall
// finds in the ring once the spiller runs; the overload monitor's watch
// (stealwatch.go) wakes the spiller once a Drain call has run SlowDrain.
func (t *spillTier[T]) due(s *Sink[T], i int) bool {
	n := s.shards[i].ring.Len()
	return n != 0 && (n >= s.cfg.ringCapacity/4 || s.handOffsParked(i))
}

// move moves shard i's ring to its log, spillChunk values per hold of
// the consumer mutex, until the ring is empty or the tier refuses (or,
// unless all, the sink stops). It pushes the values of the pushes parked
// on the shard into the room (admitHandOffs), and wakes the others that
// the room lets in.
func (t *spillTier[T]) move(s *Sink[T], i int, all bool) {
	sh := &s.shards[i]
	for {
		sh.mu.Lock()
		n, ok := t.moveChunk(s, i)
		s.checkLedger(i)
		sh.mu.Unlock()
		if n > 0 {
			// The parked pushes get the room first, their values pushed
			// for them (see handoff.go); what is left wakes the others.
			s.wakeHandOffs(i, n-s.admitHandOffs(i))
			s.wakeWaitersIfAny()
		}
		if !ok || n < spillChunk || !all && s.reached(phaseStopping) {
			return
		}
	}
}

// moveChunk moves up to spillChunk values from shard i's ring to its log,
// the carry first, and reports how many it took from the ring and whether
// the tier took them all (false: the last one is the carry now).
// shard.mu is held.
func (t *spillTier[T]) moveChunk(s *Sink[T], i int) (moved int, ok bool) {
	ts, sh := &t.shards[i], &s.shards[i]
	if ts.carrying {
		if !t.write(s, i, ts.carry) {
			return 0, false
		}
		ts.carrying = false
	}
	// The moved values are counted once, at the end, rather than with a
	// locked add per value; under shard.mu, as the ledger needs.
	defer func() { ts.ledger.spill(uint64(moved)) }()
	for moved < spillChunk {
		v, popped := sh.ring.TryPop()
		if !popped {
			break
		}
		moved++
		if !ts.hasDisk.Load() {
			ts.hasDisk.Store(true)
		}
		if sh.slow != nil && sh.slow.budget != nil {
			// Out of memory: its bytes go back to the budget.
			sh.slow.budget.release(sizeOf(sh.slow.budget.sizeOf, v))
		}
		if !t.append(s, i, v) {
			return moved, false
		}
	}
	return moved, true
}

// append encodes v and writes it to shard i's log (write), and reports
// whether the tier took it: written, or lost (a Codec error, a record too
// large: counted). false means the tier cannot take it now (full, or a
// failed write): its record is the carry. shard.mu is held.
func (t *spillTier[T]) append(s *Sink[T], i int, v T) bool {
	ts := &t.shards[i]
	enc, err := t.codec.Append(t.enc[:0], v)
	if cap(enc) <= 1<<20 {
		t.enc = enc[:0]
	}
	if err != nil {
		ts.ledger.lose(1)
		t.fault(s, i, "its Codec could not encode a value; the value is lost", err)
		return true
	}
	if !t.write(s, i, enc) {
		ts.carry, ts.carrying = append(ts.carry[:0], enc...), true
		return false
	}
	return true
}

// write appends the record enc to shard i's log, and reports whether it
// is dealt with (written, or lost and counted); false: the tier cannot
// take it now. shard.mu is held.
func (t *spillTier[T]) write(s *Sink[T], i int, enc []byte) bool {
	ts := &t.shards[i]
	err := ts.own.Append(enc)
	var we *spill.WriteError
	switch {
	case err == nil:
		if atomic.LoadUint32(&ts.full) != 0 {
			atomic.StoreUint32(&ts.full, 0)
		}
		if !t.unsynced.Load() {
			t.unsynced.Store(true)
		}
		return true
	case errors.Is(err, spill.ErrFull):
		atomic.StoreUint32(&ts.full, 1)
		return false
	case errors.As(err, &we):
		ts.countLogLosses()
		t.pause(s, i, "a write failed", err)
		return false
	default: // spill.ErrTooLarge
		ts.ledger.lose(1)
		t.fault(s, i, "a value is too large to spill; the value is lost", err)
		return true
	}
}

// pause turns shard i's tier off for spillRetry after a failed write
// (what, err), and reports it: the spiller moves nothing of the shard
// meanwhile, and pushes that its ring refuses count as dropped for the
// disk. The spiller's, the syncer's and the worker's (a write the log
// made for its reads), or Shutdown's once the first two have exited.
func (t *spillTier[T]) pause(s *Sink[T], i int, what string, err error) {
	t.shards[i].offUntil.Store(s.now() + int64(spillRetry))
	t.fault(s, i, what+"; spilling is off for a while", err)
}

// fault counts a failed disk or Codec operation of shard i (-1: of the
// whole tier) and reports it through the logger, at most once per
// spillRetry.
func (t *spillTier[T]) fault(s *Sink[T], i int, what string, err error) {
	t.errors.Add(1)
	if !t.reports.Turn(s.now(), spillRetry) {
		return
	}
	args := []any{"sink", s.cfg.name, "error", err.Error()}
	if i >= 0 {
		args = append(args, "shard", i)
	}
	s.log(slog.LevelError, "sink: spill: "+what, args...)
}

// syncer runs syncAll each time due fires, until the sink stops; it
// closes done when it returns. Shutdown syncs what is left (close).
func (t *spillTier[T]) syncer(s *Sink[T], due <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	for {
		select {
		case <-due:
			t.syncAll(s)
		case <-s.stop:
			return
		}
	}
}

// syncAll syncs every shard's log (its segment and the done position).
// Sync runs without the shard's mutex, which the spiller and the worker
// go on taking meanwhile; what a failed write of it lost is counted under
// the mutex once it returns (countLogLosses).
func (t *spillTier[T]) syncAll(s *Sink[T]) {
	t.unsynced.Store(false)
	for i := range t.shards {
		ts := &t.shards[i]
		err := ts.own.Sync()
		if hook := s.cfg.exp.syncHook; hook != nil {
			hook(i, err)
		}
		var we *spill.WriteError
		if errors.As(err, &we) {
			sh := &s.shards[i]
			sh.mu.Lock()
			ts.countLogLosses()
			s.checkLedger(i)
			sh.mu.Unlock()
			t.pause(s, i, "a sync failed", err)
		} else if err != nil {
			t.fault(s, i, "a sync failed", err)
		}
	}
}

// replay hands up to limit values of shard i's tier to w's batch, oldest
// first, and reports how many, how many of them an earlier sink on the
// directory wrote (counted in recovered, not in the shard's handed), and
// whether the tier is empty now (the worker may go on with the ring).
// shard.mu is held.
func (t *spillTier[T]) replay(w *worker[T], i, limit int) (n, recovered int, empty bool) {
	ts := &t.shards[i]
	if !ts.hasDisk.Load() || ts.closed {
		return 0, 0, true
	}
	// This sink's values handed are counted once, at the end, before the
	// sweep of an end of file (under shard.mu, as the ledger needs).
	drained := uint64(0)
	defer func() { ts.ledger.drain(drained) }()
	for n < limit {
		p, earlier, err := ts.next()
		if err == io.EOF && ts.carrying {
			p, earlier, err = ts.carry, false, nil
			ts.carrying = false
		}
		if err == io.EOF {
			// Everything is read: what this sink moved out and neither
			// handed nor counted, failed writes lost or a corrupt record
			// cut off. The reader got io.EOF after taking the log's lock
			// behind every failed write of what it did not read, which
			// counted its records there: countLogLosses sees them all,
			// and the sweep counts the rest.
			ts.countLogLosses()
			ts.ledger.drain(drained)
			drained = 0
			ts.ledger.loseBacklog()
			ts.hasDisk.Store(false)
			return n, recovered, true
		}
		w.fromDisk = true // a record was read: done must mark it
		if err != nil {
			// What the log lost is counted now, once: a write it made
			// for the reader that failed, or a segment it gave up as
			// unreadable (a read that failed again and again). The
			// reader goes on past them, and so does the worker: a disk
			// that cannot read stops neither the shard nor its ring.
			ts.countLogLosses()
			var we *spill.WriteError
			var re *spill.ReadError
			switch {
			case errors.As(err, &re):
				t.fault(w.s, i, "a segment could not be read; the values in it are lost", err)
				continue
			case errors.As(err, &we):
				t.pause(w.s, i, "a write failed", err)
				continue
			}
			t.fault(w.s, i, "a read failed", err)
			return n, recovered, false
		}
		v, err := t.codec.Decode(p)
		switch {
		case err != nil && earlier:
			t.undecodable.Add(1)
		case err != nil:
			ts.ledger.lose(1)
		case earlier:
			ts.ledger.recover()
			recovered++
		default:
			drained++
		}
		if err != nil {
			t.fault(w.s, i, "its Codec could not decode a record; the record is lost", err)
			continue
		}
		w.batch = append(w.batch, v)
		n++
	}
	return n, recovered, false
}

// next returns the shard's oldest record on disk, and whether an earlier
// sink wrote it. shard.mu is held.
func (ts *spillShard) next() ([]byte, bool, error) {
	for len(ts.earlier) > 0 {
		p, err := ts.earlier[0].Next()
		if err != io.EOF {
			return p, true, err
		}
		ts.spent = append(ts.spent, ts.earlier[0])
		ts.earlier = ts.earlier[1:]
	}
	p, err := ts.own.Next()
	return p, err == nil && ts.own.FromEarlier(), err
}

// done marks what shard i's worker read from the tier as done, once the
// Drain calls that got it have returned: the logs take out the segments
// it read, whose files the reclaimer removes (reclaimAll), and the logs
// of an earlier sink read to the end are removed. shard.mu is held.
func (t *spillTier[T]) done(s *Sink[T], i int) {
	ts := &t.shards[i]
	if ts.closed {
		return
	}
	if err := ts.own.MarkDone(); err != nil {
		t.fault(s, i, "a segment could not be removed", err)
	}
	if len(ts.earlier) > 0 {
		if err := ts.earlier[0].MarkDone(); err != nil {
			t.fault(s, i, "a segment could not be removed", err)
		}
	}
	for _, l := range ts.spent {
		dir := l.Dir()
		if err := l.Close(); err != nil {
			t.fault(s, i, "an earlier sink's log could not be closed", err)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.fault(s, i, "an earlier sink's log could not be removed", err)
		}
	}
	ts.spent = nil
	t.unsynced.Store(true)
	select {
	case t.reclaimDue <- struct{}{}:
	default: // rung already
	}
}

// reclaimer runs reclaimAll each time a worker rings reclaimDue, until
// the sink stops; it closes done when it returns. Shutdown's Log.Close
// removes what is left.
func (t *spillTier[T]) reclaimer(s *Sink[T], done chan<- struct{}) {
	defer close(done)
	for {
		select {
		case <-t.reclaimDue:
			t.reclaimAll(s)
		case <-s.stop:
			return
		}
	}
}

// reclaimAll removes the files of the segments that the workers marked
// done (Log.Reclaim) and gives their bytes back to the budget, holding no
// shard's mutex while it does: removing a file takes the file system
// milliseconds (an unlink of a read-out 64 MiB segment took 18.6 ms in a
// trace of slogsink's stalled-pipe probe with a spill directory), which
// under the shard's mutex stopped the spiller, and with it every push
// parked for room, and on the worker stopped its Drain calls (reading 200-
// byte values back, -bench '^BenchmarkSpill$/replay': 233 ns a value
// with this goroutine, 279 ns with the worker removing them). A log that
// Shutdown closed meanwhile removed them itself.
func (t *spillTier[T]) reclaimAll(s *Sink[T]) {
	t.reclaimMu.Lock()
	defer t.reclaimMu.Unlock()
	for i := range t.shards {
		ts := &t.shards[i]
		logs := [2]*spill.Log{ts.own}
		sh := &s.shards[i]
		sh.mu.Lock()
		if len(ts.earlier) > 0 {
			logs[1] = ts.earlier[0]
		}
		sh.mu.Unlock()
		if hook := s.cfg.exp.reclaimHook; hook != nil {
			hook(i)
		}
		for _, l := range logs {
			if l == nil {
				continue
			}
			if err := l.Reclaim(); err != nil {
				t.fault(s, i, "a segment could not be removed", err)
			}
		}
		// A full share that the files just removed gave room to takes
		// values again: the next stall spills from its first refused
		// push, rather than shed them for the disk (and leave the
		// spiller asleep: no push parks on a tier that refuses) until
		// the spiller's next write. Under the mutex, as the spiller's
		// ErrFull: one that came before the removal is cleared here,
		// one after it found the room, or none.
		sh.mu.Lock()
		if atomic.LoadUint32(&ts.full) != 0 && ts.own.Fits(ts.carryLen()) {
			atomic.StoreUint32(&ts.full, 0)
		}
		sh.mu.Unlock()
	}
}

// carryLen returns the length of the carry's record, 0 without one.
// shard.mu is held.
func (ts *spillShard) carryLen() int {
	if !ts.carrying {
		return 0
	}
	return len(ts.carry)
}

// close ends the tier at the end of a Shutdown: once the drain ended with
// err (its ctx cut it short), it first moves what the rings still hold to
// disk, for the next sink on the directory, and counts as lost what the
// tier refused (dropLeft); then it closes every log
// (each syncs) and releases the directory. A worker still in a Drain call
// that the ctx cut short reads nothing more from the tier. The spiller
// has exited.
func (t *spillTier[T]) close(s *Sink[T], drainErr error) error {
	if t.ended {
		return nil
	}
	t.ended = true
	if drainErr != nil {
		for i := range s.shards {
			t.move(s, i, true)
			t.dropLeft(s, i)
		}
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		t.shards[i].closed = true
		sh.mu.Unlock()
	}
	err := t.closeLogs()
	// The last writes, Close's, may have failed: what they lost is not
	// the next sink's.
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		t.shards[i].countLogLosses()
		s.checkLedger(i)
		sh.mu.Unlock()
	}
	return err
}

// dropLeft counts as lost what close's move left of shard i because the
// tier refused it (its share full, or a failed write): the carry and the
// values still in the ring. A later Shutdown must not hand them to Drain
// (the tier's older values are the next sink's, and would reach its
// Drain after them), and the carry, uncounted, would have gone with the
// log. The spiller has exited; the workers read nothing more from the
// tier once it is closed, and a worker still in a Drain call that the ctx
// cut short takes nothing from the ring (its final drain ends with the
// ctx).
func (t *spillTier[T]) dropLeft(s *Sink[T], i int) {
	ts, sh := &t.shards[i], &s.shards[i]
	sh.mu.Lock()
	n := 0
	if ts.carrying {
		ts.carrying = false
		ts.ledger.lose(1)
		n++
	}
	for {
		v, ok := sh.ring.TryPop()
		if !ok {
			break
		}
		// Moved out of the ring into the tier, which loses it.
		ts.ledger.spill(1)
		ts.ledger.lose(1)
		n++
		if sh.slow != nil && sh.slow.budget != nil {
			sh.slow.budget.release(sizeOf(sh.slow.budget.sizeOf, v))
		}
	}
	s.checkLedger(i)
	sh.mu.Unlock()
	if n > 0 {
		t.fault(s, i, "Shutdown's ctx ended while the tier could take no more (full, or off after a failed write); the values it could not write are lost",
			fmt.Errorf("%d values lost", n))
	}
}

// spillTakes reports whether shard i's tier takes values now: on, not full and
// not off. Pushes then park while its Drain is slow (the spiller takes).
func (s *Sink[T]) spillTakes(i int) bool {
	return s.spill != nil && !s.spill.shards[i].refuses(s.epoch)
}

// readStats adds the tier's disk figures to st: the bytes of its files,
// its failed operations, and what was skipped as corrupt.
func (t *spillTier[T]) readStats(st *Stats) {
	st.SpillErrors = t.errors.Load()
	st.SpillCorrupt = t.undecodable.Load()
	for i := range t.shards {
		ls := t.shards[i].own.Stats()
		st.SpillBytes += ls.Bytes
		st.SpillCorrupt += ls.Corrupt
	}
}
