package sink_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/vyukov"
	"github.com/shardedsink/shardedsink/sink"
)

// In a synctest bubble, synctest.Wait returns only once every goroutine of
// the bubble is durably blocked: an idle worker that spun forever would hang
// these tests.

func TestIdleWakeDoorbellWakesAParkedWorkerAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &collector[ev]{}
		s, err := sink.New(sink.Config[ev]{Shards: 2}, c)
		require.NoError(t, err)
		synctest.Wait() // both workers parked
		start := time.Now()
		for i := range 2 {
			require.True(t, s.HandleFor(uint64(i)).Push(ev{i}))
		}
		synctest.Wait()
		require.Equal(t, 2, c.count())
		require.Zero(t, time.Since(start), "woken by the doorbell, not by a timer")
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

// capturing is a ring factory that keeps the rings it makes, so that a test
// can push into a ring behind the sink's back, as a producer whose doorbell
// slipped would.
type capturing struct {
	mu    sync.Mutex
	rings []ring.Ring[ev]
}

func (c *capturing) factory(capacity int) ring.Ring[ev] {
	r := vyukov.Factory[ev](capacity)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rings = append(c.rings, r)
	return r
}

func TestIdleWakeRecheckCoversAMissedDoorbell(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &collector[ev]{}
		rings := &capturing{}
		s, err := sink.New(sink.Config[ev]{Shards: 1, Ring: rings.factory}, c)
		require.NoError(t, err)
		synctest.Wait()
		start := time.Now()
		require.True(t, rings.rings[0].TryPush(ev{1})) // no doorbell
		synctest.Wait()
		require.Zero(t, c.count(), "the parked worker did not see it yet")
		time.Sleep(sink.WakeRecheck)
		synctest.Wait()
		require.Equal(t, 1, c.count())
		require.Equal(t, sink.WakeRecheck, time.Since(start), "found by the safety-net recheck")
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

func TestIdleWakeRecheckFollowsIdleSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &collector[ev]{}
		rings := &capturing{}
		s, err := sink.New(sink.Config[ev]{Shards: 1, Ring: rings.factory, IdleSleep: 7 * time.Millisecond}, c)
		require.NoError(t, err)
		synctest.Wait()
		require.True(t, rings.rings[0].TryPush(ev{1}))
		time.Sleep(6 * time.Millisecond)
		synctest.Wait()
		require.Zero(t, c.count())
		time.Sleep(time.Millisecond)
		synctest.Wait()
		require.Equal(t, 1, c.count())
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

func TestIdlePollFindsValuesWithinIdleSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &collector[ev]{}
		s, err := sink.New(sink.Config[ev]{Shards: 1, Idle: sink.IdlePoll, IdleSleep: time.Millisecond}, c)
		require.NoError(t, err)
		synctest.Wait()
		require.True(t, s.Handle().Push(ev{1}))
		synctest.Wait()
		require.Zero(t, c.count(), "a polling worker is not woken by producers")
		time.Sleep(time.Millisecond)
		synctest.Wait()
		require.Equal(t, 1, c.count())
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

func TestIdleWorkersPark(t *testing.T) {
	for _, mode := range []sink.IdleMode{sink.IdleWake, sink.IdlePoll} {
		t.Run(mode.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, err := sink.New(sink.Config[ev]{Shards: 4, Idle: mode}, nop[ev]())
				require.NoError(t, err)
				// Returns only if every worker blocks: none spins.
				synctest.Wait()
				time.Sleep(time.Second)
				synctest.Wait()
				require.NoError(t, s.Shutdown(context.Background()))
			})
		})
	}
}

func TestShutdownWakesParkedWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := sink.New(sink.Config[ev]{Shards: 4}, nop[ev]())
		require.NoError(t, err)
		synctest.Wait()
		start := time.Now()
		require.NoError(t, s.Shutdown(context.Background()))
		require.Zero(t, time.Since(start), "no worker waited for its recheck timer")
	})
}

func TestFlushWakesParkedWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &collector[ev]{}
		rings := &capturing{}
		s, err := sink.New(sink.Config[ev]{Shards: 2, Ring: rings.factory}, c)
		require.NoError(t, err)
		synctest.Wait()
		start := time.Now()
		require.True(t, rings.rings[1].TryPush(ev{1})) // no doorbell
		require.NoError(t, s.Flush(context.Background()))
		require.Equal(t, 1, c.count())
		require.Less(t, time.Since(start), sink.WakeRecheck, "Flush rang the doorbell")
		require.NoError(t, s.Shutdown(context.Background()))
	})
}

// A polling worker sleeps IdleSleep between looks, and producers never wake
// it; Flush does, so that a Flush does not wait out a long poll interval.
func TestFlushWakesPollingWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &collector[ev]{}
		s, err := sink.New(sink.Config[ev]{Shards: 2, Idle: sink.IdlePoll, IdleSleep: time.Hour}, c)
		require.NoError(t, err)
		synctest.Wait() // both workers asleep for an hour
		start := time.Now()
		require.True(t, s.HandleFor(0).Push(ev{1}))
		synctest.Wait()
		require.Zero(t, c.count(), "producers do not wake a polling worker")
		require.NoError(t, s.Flush(context.Background()))
		require.Equal(t, 1, c.count())
		require.Less(t, time.Since(start), time.Second, "Flush woke the worker")
		require.NoError(t, s.Shutdown(context.Background()))
	})
}
