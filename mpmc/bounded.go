package mpmc

import (
	"sync/atomic"

	"github.com/shardedsink/shardedsink/internal/backoff"
	"github.com/shardedsink/shardedsink/ring"
)

// This file holds the two ways a bounded channel's storage refuses a push
// once the channel is closed.
//
// Why the channel cannot just check a closed flag before it pushes: a send
// that reads the flag as open and is then delayed (preempted) before its
// push can push after Close has returned, into room that a receive, or the
// last receiver's drain, made after the close. The send then returns nil
// for a value that either sits in a closed channel whose receivers may
// already have seen ErrClosed and left, or is dropped by the drain. (The
// close-race stress test caught exactly that: a Send returned nil after the
// last receiver's Release.) Closing has to be one atomic step with respect
// to every push. concurrent-queue, under async-channel, does it with a mark
// bit in the tail word that every push compare-and-swaps, and the vyukov
// ring behind [Bounded] has that design (vyukov.Ring.Close). A ring.Ring from
// BoundedOn that has no Close of its own gets guardedRing below, which
// counts the pushes in flight instead: two more atomic read-modify-writes per
// push.

// guardedRing makes any ring.Ring closable: state counts the pushes in
// flight (in units of 2) and carries the closed mark in its low bit. A push
// adds 2 before it pushes and takes 2 away after, and gives up if the add
// returned the mark; Close sets the mark and then waits until no push is in
// flight. When Close returns, every push that will ever succeed has
// returned. The cost is two atomic read-modify-writes per push, on a word
// that all senders share.
type guardedRing[T any] struct {
	ring.Ring[T]
	state atomic.Int64
}

func (g *guardedRing[T]) TryPush(v T) bool {
	if g.state.Add(2)&1 != 0 { // seq-cst: Close's OR and this add are ordered
		g.state.Add(-2)
		return false
	}
	ok := g.Ring.TryPush(v)
	g.state.Add(-2)
	return ok
}

func (g *guardedRing[T]) Close() bool {
	if g.state.Or(1)&1 != 0 {
		return false
	}
	// Wait for the pushes in flight. Each is a TryPush, which does not
	// wait for room, so this ends as soon as they are scheduled.
	var b backoff.Backoff
	for g.state.Load() != 1 {
		b.Snooze()
	}
	return true
}

func (g *guardedRing[T]) IsClosed() bool { return g.state.Load()&1 != 0 }
