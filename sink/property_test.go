package sink_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/shardedsink/shardedsink/sink"
)

// Port of accounting_identity_holds_across_shapes. The original ran it with
// nothing draining; here every worker is held in a gated Drain with the
// first value it took, so the rings only fill. For every shape,
// accepted + rejected == attempted and Dropped() == rejected.
func TestAccountingIdentityAcrossShapes(t *testing.T) {
	for _, shards := range []int{1, 2, 4, 8} {
		for _, capacity := range []int{1, 16, 100} {
			t.Run(fmt.Sprintf("shards=%d/cap=%d", shards, capacity), func(t *testing.T) {
				g := newGate[ev]()
				cfg := testCfg(shards, capacity, 1)
				cfg.OverloadInterval = time.Hour
				s := newSink(t, cfg, g)
				t.Cleanup(g.release)
				attempted := shards*capacity*4 + 7
				accepted, rejected := 0, 0
				for i := range attempted {
					if s.Push(ev{i}) {
						accepted++
					} else {
						rejected++
					}
				}
				require.Equal(t, attempted, accepted+rejected)
				require.Equal(t, uint64(rejected), s.Dropped())
				require.Positive(t, rejected, "the rings filled")
				// Each worker holds at most one value (batch size 1), so the
				// rings and the batches bound what was accepted.
				require.LessOrEqual(t, accepted, shards*(capacity+1))
			})
		}
	}
}

// The same identity, and exactly-once delivery, over random shapes and random
// sequences of the three push paths, with the workers gated while the
// producer pushes and released before Shutdown.
func TestAccountingIdentityProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		shards := rapid.IntRange(1, 8).Draw(rt, "shards")
		capacity := rapid.IntRange(1, 64).Draw(rt, "capacity")
		batch := rapid.IntRange(1, 16).Draw(rt, "batch")
		stealing := rapid.Bool().Draw(rt, "stealing")
		ops := rapid.SliceOfN(rapid.IntRange(0, 2), 0, 600).Draw(rt, "ops")

		g := newGate[ev]()
		s, err := sink.New(sink.Config[ev]{
			Shards: shards, RingCapacity: capacity, BatchSize: batch,
			DisableStealing: !stealing, OverloadInterval: time.Hour, Logger: quiet,
		}, g)
		require.NoError(rt, err)
		var accepted []int
		rejected := 0
		h := s.Handle()
		for i, op := range ops {
			var ok bool
			switch op {
			case 0:
				ok = h.Push(ev{i})
			case 1:
				ok = s.Push(ev{i})
			default:
				ok = s.HandleFor(uint64(i % 5)).Push(ev{i})
			}
			if ok {
				accepted = append(accepted, i)
			} else {
				rejected++
			}
		}
		require.Equal(rt, len(ops), len(accepted)+rejected)
		require.Equal(rt, uint64(rejected), s.Dropped())
		st := s.Stats()
		require.Equal(rt, uint64(rejected), st.Dropped)
		g.release()
		require.NoError(rt, s.Shutdown(context.Background()))
		var got []int
		for _, v := range g.values() {
			got = append(got, v.id)
		}
		slices.Sort(got)
		if len(accepted) == 0 {
			accepted = nil
		}
		require.Equal(rt, accepted, got, "every accepted value drained exactly once")
	})
}
