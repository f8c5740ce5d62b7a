package sink

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// setParkHook makes s, built and not started (bare), run f where a
// PushWait caller is about to block.
func setParkHook(s *Sink[int], f func(shard int)) { s.cfg.exp.parkHook = f }

// The drain frees the last room between the caller's last look at the ring
// and its block: the caller was counted before that look, so the drain's
// wake-up finds it. (Counting it after the look, or looking before joining
// the queue, loses this wake-up, and the caller waits out its ctx.)
func TestAWaiterThatRacesTheDrainIsWoken(t *testing.T) {
	s := bare(t, Config[int]{Shards: 1, RingCapacity: 1})
	fill(t, s, 0, 1)
	freed := false
	setParkHook(s, func(shard int) {
		if freed {
			return
		}
		freed = true
		_, ok := s.shards[shard].ring.TryPop()
		require.True(t, ok)
		s.wakeWaitersIfAny() // what a worker does after its pops
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, s.handles[0].PushWait(ctx, 7))
	v, ok := s.shards[0].ring.TryPop()
	require.True(t, ok)
	require.Equal(t, 7, v)
	require.Zero(t, s.Stats().Waiting)
}

// A caller woken for room that it does not use (its ctx ended as it was
// woken) hands the room on to the next waiter.
func TestAWakeUpLeftUnusedPassesToTheNextWaiter(t *testing.T) {
	s := bare(t, Config[int]{Shards: 1, RingCapacity: 2})
	fill(t, s, 0, 2)
	q := &s.waits[0]
	first, second := newParked(0), newParked(0)
	s.enqueue(q, first, false)
	s.enqueue(q, second, false)
	require.Equal(t, int32(2), s.waiting)
	_, ok := s.shards[0].ring.TryPop()
	require.True(t, ok)
	s.wakeWaitersIfAny()
	require.Len(t, first.ready, 1, "one slot free: the oldest waiter is woken")
	require.Empty(t, second.ready)
	require.Equal(t, int32(1), s.waiting)
	// first leaves (its ctx ended) without pushing: second gets the room.
	s.dequeue(q, 0, first, true)
	require.Len(t, second.ready, 1, "the room passed on")
	require.Zero(t, s.waiting)
	require.Zero(t, q.list.len())
}

// Room in bytes wakes waiters by their sizes, in order: the oldest that
// does not fit stops the wake-ups (no overtaking), and a value of no bytes
// always fits.
func TestWakeUpsFollowTheBytesLeft(t *testing.T) {
	s, err := build(Config[int]{Shards: 1, RingCapacity: 8, SizeOf: func(v int) int { return v }, MaxQueuedBytes: 100}, nopAction)
	require.NoError(t, err)
	require.True(t, s.handles[0].Push(70))
	q := &s.waits[0]
	ws := []*parked{newParked(20), newParked(20), newParked(0)}
	for _, w := range ws {
		s.enqueue(q, w, false)
	}
	s.wakeWaitersIfAny()
	require.Len(t, ws[0].ready, 1, "20 of the 30 bytes left")
	require.Empty(t, ws[1].ready, "10 bytes left: the second does not fit")
	require.Empty(t, ws[2].ready, "no overtaking")
	require.Equal(t, int32(2), s.waiting)
}
