package mpmc_test

// The tests of smol-rs/async-channel's tests/unbounded.rs, ported as those of
// tests/bounded.rs are (see asyncchannel_bounded_test.go), with the same fix
// of the sender_count slip.

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/mpmc"
)

func TestUnboundedSmoke(t *testing.T) {
	ctx := context.Background()
	s, r := mpmc.Unbounded[int]()

	require.NoError(t, s.TrySend(7))
	v, err := r.TryRecv()
	require.NoError(t, err)
	require.Equal(t, 7, v)

	require.NoError(t, s.Send(ctx, 8))
	v, err = r.Recv(ctx)
	require.NoError(t, err)
	require.Equal(t, 8, v)

	_, err = r.TryRecv()
	require.ErrorIs(t, err, mpmc.ErrEmpty)
}

func TestUnboundedSmokeBlocking(t *testing.T) {
	ctx := deadline(t)
	s, r := mpmc.Unbounded[int]()

	require.NoError(t, s.TrySend(7))
	v, err := r.TryRecv()
	require.NoError(t, err)
	require.Equal(t, 7, v)

	parallel(func() { assert.NoError(t, s.Send(ctx, 8)) })
	v, err = r.Recv(ctx)
	require.NoError(t, err)
	require.Equal(t, 8, v)

	require.NoError(t, s.Send(ctx, 9))
	parallel(func() { recvIs(t, ctx, r, 9) })

	_, err = r.TryRecv()
	require.ErrorIs(t, err, mpmc.ErrEmpty)
}

func TestUnboundedCapacity(t *testing.T) {
	s, r := mpmc.Unbounded[struct{}]()
	require.Equal(t, 0, s.Cap(), "0 means unbounded")
	require.Equal(t, 0, r.Cap())
}

func TestUnboundedLenEmptyFull(t *testing.T) {
	ctx := context.Background()
	s, r := mpmc.Unbounded[struct{}]()
	state := func(n int, empty bool) {
		t.Helper()
		require.Equal(t, n, s.Len())
		require.Equal(t, empty, s.IsEmpty())
		require.False(t, s.IsFull())
		require.Equal(t, n, r.Len())
		require.Equal(t, empty, r.IsEmpty())
		require.False(t, r.IsFull())
	}

	state(0, true)
	require.NoError(t, s.Send(ctx, struct{}{}))
	state(1, false)
	_, err := r.Recv(ctx)
	require.NoError(t, err)
	state(0, true)
}

func TestUnboundedTryRecv(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Unbounded[int]()
		parallel(func() {
			_, err := r.TryRecv()
			assert.ErrorIs(t, err, mpmc.ErrEmpty)
			time.Sleep(ms(1500))
			v, err := r.TryRecv()
			assert.NoError(t, err)
			assert.Equal(t, 7, v)
			time.Sleep(ms(500))
			_, err = r.TryRecv()
			assert.ErrorIs(t, err, mpmc.ErrClosed)
		}, func() {
			time.Sleep(ms(1000))
			assert.NoError(t, s.Send(ctx, 7))
			s.Release()
		})
	})
}

func TestUnboundedRecv(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Unbounded[int]()
		parallel(func() {
			recvIs(t, ctx, r, 7)
			time.Sleep(ms(1000))
			recvIs(t, ctx, r, 8)
			time.Sleep(ms(1000))
			recvIs(t, ctx, r, 9)
			_, err := r.Recv(ctx)
			assert.ErrorIs(t, err, mpmc.ErrClosed)
		}, func() {
			time.Sleep(ms(1500))
			assert.NoError(t, s.Send(ctx, 7))
			assert.NoError(t, s.Send(ctx, 8))
			assert.NoError(t, s.Send(ctx, 9))
			s.Release()
		})
	})
}

func TestUnboundedTrySend(t *testing.T) {
	s, r := mpmc.Unbounded[int]()
	for i := range 1000 {
		require.NoError(t, s.TrySend(i))
	}
	r.Release()
	require.ErrorIs(t, s.TrySend(777), mpmc.ErrClosed)
}

func TestUnboundedSend(t *testing.T) {
	ctx := context.Background()
	s, r := mpmc.Unbounded[int]()
	for i := range 1000 {
		require.NoError(t, s.Send(ctx, i))
	}
	r.Release()
	require.ErrorIs(t, s.Send(ctx, 777), mpmc.ErrClosed)
}

func TestUnboundedSendAfterClose(t *testing.T) {
	ctx := context.Background()
	s, r := mpmc.Unbounded[int]()
	require.NoError(t, s.Send(ctx, 1))
	require.NoError(t, s.Send(ctx, 2))
	require.NoError(t, s.Send(ctx, 3))

	r.Release()

	require.ErrorIs(t, s.Send(ctx, 4), mpmc.ErrClosed)
	require.ErrorIs(t, s.TrySend(5), mpmc.ErrClosed)
}

func TestUnboundedRecvAfterClose(t *testing.T) {
	ctx := context.Background()
	s, r := mpmc.Unbounded[int]()
	require.NoError(t, s.Send(ctx, 1))
	require.NoError(t, s.Send(ctx, 2))
	require.NoError(t, s.Send(ctx, 3))

	s.Release()

	for want := 1; want <= 3; want++ {
		v, err := r.Recv(ctx)
		require.NoError(t, err)
		require.Equal(t, want, v)
	}
	_, err := r.Recv(ctx)
	require.ErrorIs(t, err, mpmc.ErrClosed)
}

func TestUnboundedLen(t *testing.T) {
	ctx := context.Background()
	s, r := mpmc.Unbounded[int]()
	require.Equal(t, 0, s.Len())
	require.Equal(t, 0, r.Len())

	for i := range 50 {
		require.NoError(t, s.Send(ctx, i))
		require.Equal(t, i+1, s.Len())
	}
	for i := range 50 {
		_, err := r.Recv(ctx)
		require.NoError(t, err)
		require.Equal(t, 50-i-1, r.Len())
	}
	require.Equal(t, 0, s.Len())
	require.Equal(t, 0, r.Len())
}

func TestUnboundedReceiverCount(t *testing.T) {
	s, r := mpmc.Unbounded[struct{}]()
	clones := make([]*mpmc.Receiver[struct{}], 20)
	for i := range clones {
		clones[i] = r.Clone()
	}
	require.Equal(t, 21, s.ReceiverCount())
	require.Equal(t, 21, r.ReceiverCount())

	for _, c := range clones {
		c.Release()
	}
	require.Equal(t, 1, s.ReceiverCount())
	require.Equal(t, 1, r.ReceiverCount())
}

// TestUnboundedSenderCount checks SenderCount after the clones are
// released, where the original checked receiver_count by mistake.
func TestUnboundedSenderCount(t *testing.T) {
	s, r := mpmc.Unbounded[struct{}]()
	clones := make([]*mpmc.Sender[struct{}], 20)
	for i := range clones {
		clones[i] = s.Clone()
	}
	require.Equal(t, 21, s.SenderCount())
	require.Equal(t, 21, r.SenderCount())

	for _, c := range clones {
		c.Release()
	}
	require.Equal(t, 1, s.SenderCount())
	require.Equal(t, 1, r.SenderCount())
}

func TestUnboundedCloseWakesReceiver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Unbounded[struct{}]()
		parallel(func() {
			_, err := r.Recv(ctx)
			assert.ErrorIs(t, err, mpmc.ErrClosed)
		}, func() {
			time.Sleep(ms(1000))
			s.Release()
		})
	})
}

func TestUnboundedSPSC(t *testing.T) {
	const count = 100_000
	ctx := deadline(t)
	s, r := mpmc.Unbounded[int]()
	parallel(func() {
		for i := range count {
			recvIs(t, ctx, r, i)
		}
		_, err := r.Recv(ctx)
		assert.ErrorIs(t, err, mpmc.ErrClosed)
	}, func() {
		for i := range count {
			assert.NoError(t, s.Send(ctx, i))
		}
		s.Release()
	})
}

func TestUnboundedMPMC(t *testing.T) {
	const count = 25_000
	const threads = 4
	ctx := deadline(t)
	s, r := mpmc.Unbounded[int]()
	seen := make([]atomic.Int32, count)
	parallel(append(
		each(threads, func(int) {
			for range count {
				n, err := r.Recv(ctx)
				if !assert.NoError(t, err) {
					return
				}
				seen[n].Add(1)
			}
		}),
		each(threads, func(int) {
			for i := range count {
				assert.NoError(t, s.Send(ctx, i))
			}
		})...)...)
	_, err := r.TryRecv()
	require.ErrorIs(t, err, mpmc.ErrEmpty)
	for n := range seen {
		require.EqualValues(t, threads, seen[n].Load(), "value %d", n)
	}
}

func TestUnboundedMPMCStream(t *testing.T) {
	const count = 25_000
	const threads = 4
	ctx := deadline(t)
	s, r := mpmc.Unbounded[int]()
	seen := make([]atomic.Int32, count)
	parallel(append(
		each(threads, func(int) {
			got := 0
			for n := range r.All(ctx) {
				seen[n].Add(1)
				if got++; got == count {
					break
				}
			}
			assert.Equal(t, count, got)
		}),
		each(threads, func(int) {
			for i := range count {
				assert.NoError(t, s.Send(ctx, i))
			}
		})...)...)
	_, err := r.TryRecv()
	require.ErrorIs(t, err, mpmc.ErrEmpty)
	for n := range seen {
		require.EqualValues(t, threads, seen[n].Load(), "value %d", n)
	}
}

func TestUnboundedWeak(t *testing.T) {
	ctx := context.Background()
	s, r := mpmc.Unbounded[int]()
	ws, wr := s.Downgrade(), r.Downgrade()

	s2, ok := ws.Upgrade()
	require.True(t, ok)
	require.NoError(t, s2.Send(ctx, 3))
	r2, ok := wr.Upgrade()
	require.True(t, ok)
	v, err := r2.Recv(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, v)
	s2.Release()
	r2.Release()

	s.Release()
	r.Release()

	_, ok = ws.Upgrade()
	require.False(t, ok)
	_, ok = wr.Upgrade()
	require.False(t, ok)
}
