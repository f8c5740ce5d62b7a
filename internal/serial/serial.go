// Package serial serialises the calls of a resumable operation (the
// sinks' Shutdown): one slot, held by the call that works.
package serial

import "context"

// Slot is one turn: make it with New.
type Slot chan struct{}

// New returns a free Slot.
func New() Slot { return make(Slot, 1) }

// Take takes the slot, waiting for the call that holds it; it returns
// ctx.Err() when ctx ends first. A ctx that has already ended does not
// keep a free slot from being taken (a select with both ready picks at
// random). The caller gives the slot back with Release.
func (s Slot) Take(ctx context.Context) error {
	select {
	case s <- struct{}{}:
		return nil
	default:
	}
	select {
	case s <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Release gives back the slot that Take took.
func (s Slot) Release() { <-s }
