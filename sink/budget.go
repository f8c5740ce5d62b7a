package sink

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/shardedsink/shardedsink/internal/layout"
	"github.com/shardedsink/shardedsink/ring"
)

// maxValueBytes is the largest size SizeOf may return: far above any real
// value. The byte counter of a shard never passes max(share,
// maxValueBytes) (see reserve), and sums of sizes elsewhere are checked
// against overflow, so that every bound holds at every valid setting up to
// math.MaxInt.
const maxValueBytes = 1 << 48

// budget is the ring a shard pushes into when Config.MaxQueuedBytes is set:
// the shard's ring (as equip returned it, guard included) behind an
// admission in bytes. New installs it in place of the ring, so that the
// push of a sink without a byte budget is the very code it was, with no
// test of a flag: Handle.Push and Sink.Push call the ring's TryPush through
// its interface either way, and only here does a push look at bytes (the
// hot-path probe in internal/hotpath checks that no instruction of theirs
// comes from this file).
//
// held points at the shard's counter (shard.held): the bytes of its values
// in the ring and in batches whose Drain call has not returned. A push adds
// its value's size before it pushes, and takes it back if the ring refuses;
// the worker whose Drain call got the value gives it back when the call
// returns (worker.handed), and a displacing ForcePush gives back the
// displaced value's (shard.refused). So held never counts a value twice and
// never misses one that the sink holds.
type budget[T any] struct {
	ring.Ring[T] // TryPop, Len and Cap pass through
	sizeOf       func(T) int
	share        int64  // the shard's part of MaxQueuedBytes
	held         *int64 // &shard.held, or the sink's one counter (sharedBudget)
}

// TryPush admits v by its size and pushes it. It returns false, with the
// bytes given back, when the shard's share would be exceeded or the ring
// refuses; the caller's slow path (shard.refused) then tells which.
func (b *budget[T]) TryPush(v T) bool {
	n := sizeOf(b.sizeOf, v)
	if !b.reserve(n) {
		return false
	}
	if b.Ring.TryPush(v) {
		return true
	}
	b.release(n)
	return false
}

// reserve adds n to the shard's bytes if they stay within its share, or if
// the shard held nothing before (a value larger than the share goes in
// alone, so that it is not refused for ever). A value of size 0 takes no
// bytes: it is admitted without a write, whatever the shard holds (one
// larger than its share included), so that values that stand for no
// memory of their own (slogsink's records that fit in their slot) pay
// nothing for the budget but the size. The load first keeps a push into a
// full budget from writing the counter.
//
// The counter moves by compare-and-swap from a value it was loaded at, so
// it never passes max(share, maxValueBytes): no sum of sizes in flight
// can overflow it, at any share up to math.MaxInt64 (an add first and a
// check after would let the pushes in flight carry it past MaxInt64, and
// the overflowed sum would admit everything). held is never negative (a
// give-back follows its reservation), so share-held cannot overflow
// either. One compare-and-swap, the one locked instruction that a byte
// budget adds to a push of a value with a size; under contention on one
// shard's counter a push may retry it.
func (b *budget[T]) reserve(n int64) bool {
	if n == 0 {
		return true
	}
	for {
		held := atomic.LoadInt64(b.held)
		if held != 0 && n > b.share-held {
			return false
		}
		if atomic.CompareAndSwapInt64(b.held, held, held+n) {
			return true
		}
	}
}

// full reports whether the shard's share has no room for n bytes now (a
// snapshot: a give-back may make room at once).
func (b *budget[T]) full(n int64) bool {
	held := atomic.LoadInt64(b.held)
	return n != 0 && held != 0 && n > b.share-held
}

// release gives n bytes back (nothing to do for 0).
func (b *budget[T]) release(n int64) {
	if n != 0 {
		atomic.AddInt64(b.held, -n)
	}
}

// sizeOf returns f(v), the value's size, and panics when it is negative or
// beyond maxValueBytes (one unsigned comparison checks both).
func sizeOf[T any](f func(T) int, v T) int64 {
	n := f(v)
	if uint64(n) > maxValueBytes {
		panicSize(n)
	}
	return int64(n)
}

func panicSize(n int) {
	panic(fmt.Sprintf("sink: Config.SizeOf returned %d; a size must be between 0 and 2^48", n))
}

// slowPath is what a push that its ring refused needs beyond the drop
// counter: the ring's ForcePush under DropOldest (nil under DropNewest), the
// byte budget (nil without MaxQueuedBytes), and the counters of the drops
// that only these paths make. A shard with neither a ForcePush nor a budget
// has none, and counts its drops with shard.shed.
type slowPath[T any] struct {
	force  forcer[T]
	budget *budget[T]
	// shard is the shard's index, and handOff 1 when a push that the ring
	// refused hands off to the worker first (Config.HandOffWait).
	shard   int32
	handOff uint32
	// forBytes counts, of the shard's dropped, the pushes refused by the
	// byte budget (MaxQueuedBytes); displaced, the values that a push
	// under DropOldest displaced. Each is added to after dropped, only by
	// such a push, on lines apart from the read-only pointers above;
	// Stats loads them. Used only through sync/atomic's functions.
	_         [layout.CacheLine - 3*unsafe.Sizeof(uintptr(0)) - 8]byte // interface, pointer, shard, handOff
	_         [0]atomic.Uint64
	forBytes  uint64
	displaced uint64
	_         [layout.CacheLine - 16]byte
}

// refused is the end of a push whose TryPush the shard's ring refused,
// when the shard has a slow path. Under DropNewest without a byte budget it
// is shed, under DropOldest without one forcePush. With a byte budget, the push was refused by the share or
// by the ring (full, or closed): under DropNewest it counts the drop, and
// counts it as one for bytes too when the share has no room for the value
// now (a push racing with a give-back may be told either way; the drop is
// counted once whatever it is told). Under DropOldest it reserves the
// value's bytes, or drops it for bytes (the budget sheds the newest value
// whatever Overflow says: making room in bytes could displace any number
// of values), and then displaces the ring's oldest value as forcePush
// does, giving the displaced value's bytes back.
//
// Before any of that, with the hand-off on (never under DropOldest), it waits for the shard's
// worker while that is short of CPU (handOff), and returns true when the
// push then went in.
//
//go:noinline
func (sh *shard[T]) refused(v T) bool {
	if sh.slow.handOff != 0 && sh.handOffPush(v) {
		return true
	}
	b := sh.slow.budget
	if b == nil {
		if sh.slow.force == nil {
			return sh.shed()
		}
		return sh.forcePush(v)
	}
	n := sizeOf(b.sizeOf, v)
	if sh.slow.force == nil {
		// Once Shutdown has begun a refusal is one after shutdown,
		// whatever the share holds.
		sh.countRefusalFor(b.full(n))
		return false
	}
	if !b.reserve(n) {
		sh.countRefusalFor(true)
		return false
	}
	old, displaced, ok := sh.slow.force.ForcePush(v)
	if displaced {
		b.release(sizeOf(b.sizeOf, old))
		sh.countDisplaced()
	}
	if !ok {
		b.release(n)
		sh.countRefusal()
		return false
	}
	if sh.isSleeping() {
		sh.wake()
	}
	return true
}

// handOffPush is the hand-off of a push of v that the shard's ring
// refused (see handoff.go): it reports whether v went in. Only a ring full
// in slots hands off: its worker frees room by taking. A push that the
// byte budget refused (its share has no room for v now) does not, since
// the bytes may be held by a Drain call of another worker (a stealer),
// which no take of this shard's worker gives back; but while the spill
// tier takes the shard's values it does, since the spiller's moves give
// their bytes back. (Whether the ring is
// full now says nothing: the worker may have taken values since the
// refusal, and such a push must try again, not shed.)
func (sh *shard[T]) handOffPush(v T) bool {
	if b := sh.slow.budget; b != nil && b.full(sizeOf(b.sizeOf, v)) && !sh.sink.spillTakes(int(sh.slow.shard)) {
		return false
	}
	if ok, _ := sh.sink.handOff(int(sh.slow.shard), 0, func() bool { return sh.ring.TryPush(v) }, &v); !ok {
		return false
	}
	if sh.isSleeping() {
		sh.wake()
	}
	return true
}

// heldBytes returns the bytes that the shard holds (0 without a byte
// budget, and with the shared counter of sharedBudget).
func (sh *shard[T]) heldBytes() int64 { return atomic.LoadInt64(&sh.held) }

// forBytesCount returns the pushes that the byte budget refused so far.
func (sh *shard[T]) forBytesCount() uint64 {
	if sh.slow == nil {
		return 0
	}
	return atomic.LoadUint64(&sh.slow.forBytes)
}

// installBudgets puts a byte budget in front of every shard's ring when
// MaxQueuedBytes is set, and the slow paths where a shard needs one. The
// budget is split evenly, rounded down, so that the shares never sum to
// more than MaxQueuedBytes; with sharedBudget (a design alternative that
// BenchmarkBudget measures) every shard counts on one counter with the
// whole budget.
func (s *Sink[T]) installBudgets(forces []forcer[T]) {
	var shared *int64
	share := s.cfg.maxQueuedBytes / int64(len(s.shards))
	if s.cfg.exp.sharedBudget {
		shared = &new(paddedCounter).n
		share = s.cfg.maxQueuedBytes
	}
	for i := range s.shards {
		sh := &s.shards[i]
		var b *budget[T]
		if s.cfg.maxQueuedBytes > 0 {
			held := &sh.held
			if shared != nil {
				held = shared
			}
			b = &budget[T]{Ring: sh.ring, sizeOf: s.cfg.sizeOf, share: share, held: held}
			sh.ring = b
		}
		if forces[i] != nil || b != nil || s.cfg.handOffWait > 0 {
			sh.slow = &slowPath[T]{force: forces[i], budget: b, shard: int32(i)}
			if s.cfg.handOffWait > 0 && forces[i] == nil {
				// DropOldest never parks: it displaces (the package doc,
				// "What a push waits for").
				sh.slow.handOff = 1
			}
		}
	}
}

// paddedCounter is a counter alone on its cache lines.
type paddedCounter struct {
	_ [layout.CacheLine]byte
	_ [0]atomic.Int64
	n int64
	_ [layout.CacheLine - 8]byte
}

// QueuedBytes is sinkhook.Shard.QueuedBytes.
func (k shardHooks[T]) QueuedBytes() (queued, share int64) {
	sh := k.h.sh
	if sh.slow == nil || sh.slow.budget == nil {
		return 0, 0
	}
	return atomic.LoadInt64(sh.slow.budget.held), sh.slow.budget.share
}
