package sink

import "slices"

// parkList is the oldest-first list of the callers parked on one shard:
// the one list that PushWait's queue (waitQueue) and the hand-off's
// (handOffQueue) keep, each under its own mutex, which guards the list and
// the listed flags of its callers. Whoever takes a caller off the list for
// room it freed sends on the caller's one-slot ready channel, under that
// mutex, without blocking; a caller woken for room that it then finds
// taken goes back to the front (add with front), since it has waited
// longest.
type parkList struct {
	list []*parked
}

// parked is one parked caller.
type parked struct {
	// ready has one slot: the wake-up, sent by wakeOldest.
	ready chan struct{}
	// size is the bytes the caller waits room for (PushWait with
	// MaxQueuedBytes; 0 otherwise).
	size int64
	// listed is whether the caller is in its list.
	listed bool
	// admit, nil but for a parked hand-off of a value, pushes the
	// caller's value into its ring, as the caller's own try would: the
	// spiller calls it for a caller that sleeps (asleep), and sets
	// admitted when it succeeded (admitOldest). Set while the caller is
	// not listed; asleep and admitted are guarded by the list's mutex.
	admit            func() bool
	asleep, admitted bool
}

func newParked(size int64) *parked { return &parked{ready: make(chan struct{}, 1), size: size} }

// add puts p at the back of l, or at the front.
func (l *parkList) add(p *parked, front bool) {
	if front {
		l.list = slices.Insert(l.list, 0, p)
	} else {
		l.list = append(l.list, p)
	}
	p.listed = true
}

// remove takes p off l and reports whether it was on it; one that was not
// was taken off for room, and its wake-up is in p.ready (or was received).
func (l *parkList) remove(p *parked) bool {
	if !p.listed {
		return false
	}
	l.list = slices.DeleteFunc(l.list, func(x *parked) bool { return x == p })
	p.listed = false
	return true
}

// wakeOldest takes the oldest callers off l and wakes them, at most k, and
// with bytes >= 0 only while their sizes fit in bytes (a caller of size 0
// always fits; the first that does not fit stops it: no overtaking). It
// returns how many it woke.
func (l *parkList) wakeOldest(k int, bytes int64) int {
	n := 0
	for n < len(l.list) && n < k {
		p := l.list[n]
		if bytes >= 0 && p.size != 0 {
			if p.size > bytes {
				break
			}
			bytes -= p.size
		}
		p.listed = false
		p.ready <- struct{}{} // one slot, and p is out of the list: never blocks
		n++
	}
	if n > 0 {
		l.list = slices.Delete(l.list, 0, n)
	}
	return n
}

// admitOldest pushes, oldest first, the values of the callers on l that
// sleep and have an admit, until one finds no room, takes each one it
// pushed off l, marked admitted, and wakes it. It returns how many it
// pushed. A caller awake, about to try for itself, is passed over: its
// try and the admit must not both push its value.
func (l *parkList) admitOldest() int {
	n := 0
	for _, p := range l.list {
		if p.admit == nil || !p.asleep {
			continue
		}
		if !p.admit() {
			break
		}
		p.admitted, p.listed = true, false
		p.ready <- struct{}{} // one slot, and p was listed: never blocks
		n++
	}
	if n > 0 {
		l.list = slices.DeleteFunc(l.list, func(p *parked) bool { return !p.listed })
	}
	return n
}

// len returns how many callers are on l.
func (l *parkList) len() int { return len(l.list) }

// clearWake empties p.ready: the wake-up of a caller that was taken off
// its list and leaves, or parks again, without having received it.
func (p *parked) clearWake() {
	select {
	case <-p.ready:
	default:
	}
}
