package sink

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/shardedsink/shardedsink/ring"
)

// Overflow says which value a push sheds when its ring is full.
type Overflow int

const (
	// DropNewest, the default, rejects the pushed value: Push returns
	// false and the value is counted as dropped. The ring keeps its oldest
	// values.
	DropNewest Overflow = iota
	// DropOldest displaces the oldest value of the full ring to make room
	// for the pushed one, in one step of the ring (vyukov.Ring's
	// ForcePush): Push returns true and the displaced value is counted as
	// dropped. Such a push never parks, whatever the worker is doing (the
	// package doc, "What a push waits for"). The ring keeps its newest values, which is
	// what telemetry often wants. A push that succeeds with room to spare
	// costs exactly what it costs under DropNewest; only a push into a full
	// ring does more (the displacement). Push still returns false, and
	// counts the value, when the ring is closed (Shutdown has begun).
	DropOldest
)

// String returns "drop-newest", "drop-oldest", or "Overflow(N)".
func (o Overflow) String() string {
	switch o {
	case DropNewest:
		return "drop-newest"
	case DropOldest:
		return "drop-oldest"
	default:
		return fmt.Sprintf("Overflow(%d)", int(o))
	}
}

// MarshalText returns the name that [Overflow.String] gives.
func (o Overflow) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText sets o from "drop-newest" or "drop-oldest", so that an
// Overflow can come from a flag (flag.TextVar) or a configuration file.
func (o *Overflow) UnmarshalText(text []byte) error {
	switch string(text) {
	case "drop-newest":
		*o = DropNewest
	case "drop-oldest":
		*o = DropOldest
	default:
		return fmt.Errorf("sink: unknown overflow policy %q (want drop-newest or drop-oldest)", text)
	}
	return nil
}

// forcer is a ring that can displace its oldest value: vyukov.Ring's
// ForcePush. ForcePush appends v; when the ring is full it first takes the
// oldest value out and returns it with displaced true, and taking it out and
// appending v are one step with respect to every other push. ok is false,
// and v was not appended, only when the ring is closed (a value displaced
// by a ForcePush that the close interrupted is still returned).
type forcer[T any] interface {
	ForcePush(v T) (old T, displaced, ok bool)
}

// closer is a ring that closes itself: vyukov.Ring's Close. Close makes the
// ring refuse every later push and must be one atomic step with respect to
// every TryPush and ForcePush: a push either took effect before the close
// (its value is in the ring for TryPop by the time Close returns) or fails
// and leaves the ring unchanged. TryPop still returns the values left. A
// Close that only sets a flag which TryPush checks first does not meet
// this: a push that read the flag before the close can land after it.
type closer interface {
	Close() bool
}

// The bits of guarded.state.
const (
	guardClosed = 1 // set by Close: a push that has not added its count fails
	guardPush   = 2 // the unit of the count of pushes in flight
)

// guarded makes a ring that has no Close of its own closable, as mpmc does
// for the rings given to BoundedOn: it counts the pushes in flight in state
// (in units of guardPush) next to a closed mark. A push gives up at once
// when the mark is set; otherwise it adds guardPush, backs out if the add
// returned the mark, pushes, and takes guardPush away. Close sets the mark
// and waits until no push is in flight, so that when it returns every push
// that will ever succeed has taken effect. That costs a push two atomic
// read-modify-writes on a word that the shard's producers share; rings
// with a Close of their own (vyukov) pay nothing.
type guarded[T any] struct {
	ring.Ring[T]
	_     [0]atomic.Int64 // 8-byte alignment for state on 32-bit platforms
	state int64           // used only through sync/atomic's functions
}

// enter counts a push in flight, or reports false when the ring is closed.
func (g *guarded[T]) enter() bool {
	if atomic.LoadInt64(&g.state)&guardClosed != 0 {
		return false
	}
	// Sequentially consistent: Close's OR and this add are ordered. A push
	// whose add came first is waited for; one whose add came after sees the
	// mark and backs out.
	if atomic.AddInt64(&g.state, guardPush)&guardClosed != 0 {
		atomic.AddInt64(&g.state, -guardPush)
		return false
	}
	return true
}

func (g *guarded[T]) leave() { atomic.AddInt64(&g.state, -guardPush) }

func (g *guarded[T]) TryPush(v T) bool {
	if !g.enter() {
		return false
	}
	ok := g.Ring.TryPush(v)
	g.leave()
	return ok
}

// guardedForcer is a guarded ring whose inner ring has a ForcePush; the
// force push is counted like any other.
type guardedForcer[T any] struct {
	*guarded[T]
	f forcer[T]
}

func (g guardedForcer[T]) ForcePush(v T) (old T, displaced, ok bool) {
	if !g.enter() {
		return old, false, false
	}
	old, displaced, ok = g.f.ForcePush(v)
	g.leave()
	return old, displaced, ok
}

// Close sets the mark and waits for the pushes in flight; each is one
// non-blocking push, so the wait is short.
func (g *guarded[T]) Close() bool {
	if atomic.OrInt64(&g.state, guardClosed)&guardClosed != 0 {
		return false
	}
	for atomic.LoadInt64(&g.state) != guardClosed {
		runtime.Gosched()
	}
	return true
}

// equip returns the ring a shard pushes into, its Close, and its ForcePush
// under DropOldest (nil under DropNewest). A ring with a Close of its own is
// used as it is; any other is wrapped in a guard. ok is false when the
// policy is DropOldest and the ring cannot displace.
func equip[T any](r ring.Ring[T], overflow Overflow) (push ring.Ring[T], c closer, f forcer[T], ok bool) {
	rf, canForce := r.(forcer[T])
	if overflow == DropOldest && !canForce {
		return nil, nil, nil, false
	}
	if rc, closable := r.(closer); closable {
		if overflow == DropOldest {
			f = rf
		}
		return r, rc, f, true
	}
	g := &guarded[T]{Ring: r}
	if overflow == DropOldest {
		f = guardedForcer[T]{g, rf}
	}
	return g, g, f, true
}

// forcePush is the end of a push under DropOldest whose TryPush the ring
// refused: it displaces the oldest value, counts it as dropped, and rings
// the doorbell for the pushed value; when the ring is closed it counts the
// pushed value as dropped and returns false.
//
//go:noinline
func (sh *shard[T]) forcePush(v T) bool {
	_, displaced, ok := sh.slow.force.ForcePush(v)
	if displaced {
		sh.countDisplaced()
	}
	if !ok {
		sh.countRefusal() // ForcePush fails only on a closed ring
		return false
	}
	if sh.isSleeping() {
		sh.wake()
	}
	return true
}
