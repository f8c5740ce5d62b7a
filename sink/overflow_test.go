package sink_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/chanring"
	"github.com/shardedsink/shardedsink/ring/mutex"
	"github.com/shardedsink/shardedsink/ring/vyukov"
	"github.com/shardedsink/shardedsink/sink"
)

// Under DropOldest a push into a full ring displaces its oldest value and
// returns true; the displaced values are counted as dropped, and the ring
// keeps the newest.
func TestDropOldestKeepsTheNewestValues(t *testing.T) {
	g := newGate[ev]()
	cfg := testCfg(1, 4, 1)
	cfg.Overflow = sink.DropOldest
	s := newSink(t, cfg, g)
	t.Cleanup(g.release)
	h := s.Handle()
	require.True(t, h.Push(ev{0}))
	g.waitEntered(t) // the worker holds ev{0} in Drain; the ring is empty
	for i := 1; i < 15; i++ {
		require.True(t, h.Push(ev{i}), "push %d", i)
	}
	require.Equal(t, uint64(10), s.Dropped(), "1 to 10 were displaced")
	require.True(t, s.Push(ev{15}), "a handle-less push into the same full ring displaces too")
	require.Equal(t, uint64(11), s.Dropped())
	g.release()
	flush(t, s)
	var got []int
	for _, v := range g.values() {
		got = append(got, v.id)
	}
	require.Equal(t, []int{0, 12, 13, 14, 15}, got)
	st := s.Stats()
	require.Equal(t, uint64(16), st.Drained+uint64(st.Queued)+st.Dropped, "drained + queued + dropped == attempted")
}

// A handle-less push under DropOldest fills the second ring before it
// displaces, and then displaces on the second ring, where a DropNewest push
// counts its drop.
func TestDropOldestHandlelessPushDisplacesOnTheSecondRing(t *testing.T) {
	g := newGate[ev]()
	cfg := testCfg(2, 2, 1)
	cfg.Overflow = sink.DropOldest
	s := newSink(t, cfg, g)
	t.Cleanup(g.release)
	for i := range 200 {
		require.True(t, s.Push(ev{i}))
	}
	st := s.Stats()
	require.Equal(t, uint64(200), st.Drained+uint64(st.Queued)+st.Dropped)
	require.Equal(t, st.Dropped, st.PerShard[0].Dropped+st.PerShard[1].Dropped)
}

// DropOldest needs a ring that can displace: New refuses the others and
// names the backend.
func TestDropOldestRefusesRingsThatCannotDisplace(t *testing.T) {
	for _, b := range []struct {
		name    string
		factory ring.Factory[ev]
		want    string
	}{
		{"mutex", mutex.Factory[ev], "mutex.Factory"},
		{"chanring", chanring.Factory[ev], "chanring.Factory"},
	} {
		t.Run(b.name, func(t *testing.T) {
			s, err := sink.New(sink.Config[ev]{Overflow: sink.DropOldest, Ring: b.factory}, nop[ev]())
			require.Nil(t, s)
			require.ErrorIs(t, err, sink.ErrInvalidConfig)
			require.ErrorContains(t, err, "Overflow = DropOldest")
			require.ErrorContains(t, err, b.want)
			require.ErrorContains(t, err, "cannot displace")
		})
	}
}

func TestOverflowReadsAndWritesItsNames(t *testing.T) {
	for _, o := range []sink.Overflow{sink.DropNewest, sink.DropOldest} {
		text, err := o.MarshalText()
		require.NoError(t, err)
		var back sink.Overflow
		require.NoError(t, back.UnmarshalText(text))
		require.Equal(t, o, back)
	}
	require.Equal(t, "drop-newest", sink.DropNewest.String())
	require.Equal(t, "Overflow(9)", sink.Overflow(9).String())
	var o sink.Overflow
	require.ErrorContains(t, o.UnmarshalText([]byte("newest")), `unknown overflow policy "newest"`)
}

// Every value pushed under DropOldest is drained or counted, with many
// producers on few small rings: accepted + rejected == attempted, and
// drained + queued + dropped == attempted (a displaced value was accepted
// and is counted as dropped).
func TestDropOldestAccountingUnderContention(t *testing.T) {
	c := &collector[ev]{}
	cfg := testCfg(2, 8, 4)
	cfg.Overflow = sink.DropOldest
	cfg.DisableStealing = false
	s, err := sink.New(cfg, c)
	require.NoError(t, err)
	const producers, each = 8, 2000
	results := make(chan [2]int, producers)
	for p := range producers {
		go func() {
			var acc, rej int
			for i := range each {
				if s.Push(ev{p*each + i}) {
					acc++
				} else {
					rej++
				}
			}
			results <- [2]int{acc, rej}
		}()
	}
	var accepted, rejected int
	for range producers {
		r := <-results
		accepted += r[0]
		rejected += r[1]
	}
	require.Equal(t, producers*each, accepted+rejected)
	require.Zero(t, rejected, "DropOldest refuses only into a closed ring")
	require.NoError(t, s.Shutdown(context.Background()))
	st := s.Stats()
	require.Zero(t, st.Queued)
	require.Equal(t, uint64(producers*each), st.Drained+st.Dropped)
	ids := make([]int, 0, c.count())
	for _, v := range c.values() {
		ids = append(ids, v.id)
	}
	require.Len(t, ids, int(st.Drained))
	slices.Sort(ids)
	require.Len(t, slices.Compact(ids), len(ids), "no value drained twice")
}

// Shutdown closes the rings, so a factory that hands a closed ring to a
// later sink is refused by name.
func TestNewRefusesAClosedRing(t *testing.T) {
	r := vyukov.New[ev](8)
	s, err := sink.New(sink.Config[ev]{Shards: 1, RingCapacity: 8, Ring: func(int) ring.Ring[ev] { return r }}, nop[ev]())
	require.NoError(t, err)
	require.NoError(t, s.Shutdown(context.Background()))
	require.True(t, r.IsClosed())
	_, err = sink.New(sink.Config[ev]{Shards: 1, RingCapacity: 8, Ring: func(int) ring.Ring[ev] { return r }}, nop[ev]())
	require.ErrorIs(t, err, sink.ErrInvalidConfig)
	require.ErrorContains(t, err, "returned a closed ring")
}
