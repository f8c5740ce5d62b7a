// Package sinkhook gives this repository's front-ends (logsink, otelsink)
// the parts of a sink that a sink's users never call: a shard's hand-off
// and byte count, for a front-end with an admission of its own in front of
// the ring, and the timer of a Drain call's calls into its destination.
// Package sink sets the functions at its init, so they are set wherever a
// sink can be made; a package of this repository that calls them imports
// sink too.
//
// The rules these hooks serve live in package sink: the hand-off in
// sink/handoff.go's header, the pace of a destination in
// sink/drainstate.go.
package sinkhook

import (
	"context"
	"time"
)

// Shard is one shard's hooks, from the shard's *sink.Handle[T]. Each
// method is safe for concurrent use and panics, as the handle's methods
// do, on a handle not made by sink.New.
type Shard interface {
	// HandOff parks the caller, when the sink hands off and the shard is
	// backed up for want of CPU rather than behind a slow destination,
	// until ready reports true: it calls ready, and after each take of
	// the shard's worker and each of its Drain calls again. spent is what
	// earlier hand-offs of the same call waited (0 for its first): the
	// call waits at most Config.HandOffWait in all, across them. It
	// reports whether ready returned true, and how long it waited. It
	// returns false at once when ready does not and the hand-off cannot
	// wait (it is off, Shutdown has begun, the destination is slow, or
	// spent is HandOffWait). What Push does for a full ring, a caller with
	// an admission of its own does with it for its own limit. ready must
	// not block.
	//
	// While parked pushes go first (HandOffState), a caller joins the
	// queue before it calls ready, behind the pushes already parked,
	// unless the hand-off cannot wait: it then reports ready's answer at
	// once.
	HandOff(spent time.Duration, ready func() bool) (ok bool, waited time.Duration)
	// HandOffState reports, in one atomic load, whether pushes are parked
	// on the shard (or woken and not yet back in), whether its spill tier
	// takes the shard's values, and whether parked pushes go first: the
	// shard is recovering from a slow Drain call and pushes parked on it
	// have waited past a millisecond while callers that never parked took
	// the room they were woken for, so that a caller with an admission of
	// its own goes through HandOff even when its admission has room. All
	// are false when the sink does not hand off.
	HandOffState() (parked, spilling, parkedFirst bool)
	// QueuedBytes returns the bytes that the shard holds now (its values
	// in the ring and in batches whose Drain call has not returned) and
	// its share of Config.MaxQueuedBytes; both are 0 without
	// MaxQueuedBytes. It is one atomic load, and may count the sizes of
	// pushes in flight.
	QueuedBytes() (queued, share int64)
}

// ShardOf returns the hooks of h, a *sink.Handle[T] for any T; it panics
// on anything else. Set by package sink.
var ShardOf func(h any) Shard

// Calls times a Drain call's calls into its destination (a Write, an
// export), so that the sink judges the destination's pace by those calls
// rather than by whole Drain calls, which a worker short of CPU stretches.
// Call Begin just before the call into the destination and End just after
// it returns, on the goroutine of the Drain call, and not across Drain
// calls; leave out a wait for a lock that another worker holds around its
// own call. Each is one clock read and an atomic store or two.
type Calls interface {
	Begin()
	End()
}

// CallsOf returns the Calls of the Drain call whose ctx is ctx (or derives
// from it), and reports whether ctx is a Drain call's; when it is not, the
// Calls returned does nothing. Set by package sink.
var CallsOf func(ctx context.Context) (Calls, bool)
