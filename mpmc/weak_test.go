package mpmc_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/mpmc"
)

func TestWeakEndsUpgradeWhileTheChannelIsOpen(t *testing.T) {
	ctx := context.Background()
	s, r := mpmc.Unbounded[int]()
	ws, wr := s.Downgrade(), r.Downgrade()
	require.Equal(t, 1, s.SenderCount(), "a weak end is not counted")

	s2, ok := ws.Upgrade()
	require.True(t, ok)
	require.Equal(t, 2, s.SenderCount(), "an upgraded end is")
	s.Release() // s2 keeps the channel open
	require.False(t, r.IsClosed())
	require.NoError(t, s2.Send(ctx, 1))

	r2, ok := wr.Upgrade()
	require.True(t, ok)
	r.Release()
	recvIs(t, ctx, r2, 1)
	s2.Release()
	r2.Release()
}

func TestUpgradeFailsOnceTheChannelIsClosed(t *testing.T) {
	for _, how := range []string{"Close", "the last sender's Release", "the last receiver's Release"} {
		t.Run(how, func(t *testing.T) {
			s, r := mpmc.Bounded[int](1)
			ws, wr := s.Downgrade(), r.Downgrade()
			switch how {
			case "Close":
				s.Close()
			case "the last sender's Release":
				s.Release()
			case "the last receiver's Release":
				r.Release()
			}
			got, ok := ws.Upgrade()
			require.False(t, ok)
			require.Nil(t, got)
			gotR, ok := wr.Upgrade()
			require.False(t, ok)
			require.Nil(t, gotR)
		})
	}
}

// An Upgrade racing a Close either fails, or succeeds with an end that
// works like any other; the counts come out right.
func TestUpgradeRacingACloseLeavesTheCountsRight(t *testing.T) {
	for range 300 {
		s, r := mpmc.Bounded[int](1)
		ws, wr := s.Downgrade(), r.Downgrade()
		var wg sync.WaitGroup
		wg.Go(func() { s.Close() })
		wg.Go(func() {
			if s2, ok := ws.Upgrade(); ok {
				s2.Release()
			}
		})
		wg.Go(func() {
			if r2, ok := wr.Upgrade(); ok {
				r2.Release()
			}
		})
		wg.Wait()
		require.Equal(t, 1, s.SenderCount())
		require.Equal(t, 1, r.ReceiverCount())
		_, ok := ws.Upgrade()
		require.False(t, ok)
	}
}
