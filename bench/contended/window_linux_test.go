package main

import (
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func threadID() int { return syscall.Gettid() }

func TestEveryProducerRunsOnItsOwnLockedThread(t *testing.T) {
	// A goroutine locked to its thread keeps it: the thread ids the
	// producers see in two rounds are the same, and differ between them.
	const n = 3
	ids := make([][]int, n)
	pushers := make([]func(uint64) bool, n)
	for i := range pushers {
		pushers[i] = func(uint64) bool {
			if len(ids[i]) < 2 {
				ids[i] = append(ids[i], threadID())
			}
			return true
		}
	}
	c := mustCrew(t, pushers)
	defer c.finish()
	for range 2 {
		c.play(unlimited, 2*time.Millisecond, true, nil)
	}
	seen := map[int]bool{}
	for i := range n {
		if len(ids[i]) == 0 {
			continue // the scheduler may leave a producer out of a short round
		}
		require.False(t, seen[ids[i][0]], "producer %d shares a thread", i)
		seen[ids[i][0]] = true
		for _, id := range ids[i] {
			require.Equal(t, ids[i][0], id, "producer %d moved threads", i)
		}
	}
	require.NotEmpty(t, seen)
}
