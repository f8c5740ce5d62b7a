package mpmc_test

// The tests of smol-rs/async-channel's tests/bounded.rs, ported one for one
// (same names in CamelCase, same values and timings). A Rust future becomes
// a blocking call with a context, drop becomes Release, and the
// sleep-ordered threads run in a testing/synctest bubble, where the sleeps
// take no real time. The original's sender_count test checks
// receiver_count after dropping the sender clones, a copy-paste slip; this
// port checks SenderCount.

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

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestBoundedSmoke(t *testing.T) {
	ctx := context.Background()
	s, r := mpmc.Bounded[int](1)

	require.NoError(t, s.Send(ctx, 7))
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

// TestBoundedSmokeBlocking mixes waiting and non-waiting calls, and calls
// from two goroutines: Go has one kind of call where Rust has async and
// blocking ones.
func TestBoundedSmokeBlocking(t *testing.T) {
	ctx := deadline(t)
	s, r := mpmc.Bounded[int](1)

	require.NoError(t, s.TrySend(7))
	v, err := r.TryRecv()
	require.NoError(t, err)
	require.Equal(t, 7, v)

	parallel(func() { assert.NoError(t, s.Send(ctx, 8)) })
	v, err = r.Recv(ctx)
	require.NoError(t, err)
	require.Equal(t, 8, v)

	require.NoError(t, s.Send(ctx, 9))
	parallel(func() {
		v, err := r.Recv(ctx)
		assert.NoError(t, err)
		assert.Equal(t, 9, v)
	})

	_, err = r.TryRecv()
	require.ErrorIs(t, err, mpmc.ErrEmpty)
}

func TestBoundedCapacity(t *testing.T) {
	for i := 1; i < 10; i++ {
		s, r := mpmc.Bounded[struct{}](i)
		require.Equal(t, i, s.Cap())
		require.Equal(t, i, r.Cap())
	}
}

func TestBoundedLenEmptyFull(t *testing.T) {
	ctx := context.Background()
	s, r := mpmc.Bounded[struct{}](2)
	state := func(n int, empty, full bool) {
		t.Helper()
		require.Equal(t, n, s.Len())
		require.Equal(t, empty, s.IsEmpty())
		require.Equal(t, full, s.IsFull())
		require.Equal(t, n, r.Len())
		require.Equal(t, empty, r.IsEmpty())
		require.Equal(t, full, r.IsFull())
	}

	state(0, true, false)
	require.NoError(t, s.Send(ctx, struct{}{}))
	state(1, false, false)
	require.NoError(t, s.Send(ctx, struct{}{}))
	state(2, false, true)
	_, err := r.Recv(ctx)
	require.NoError(t, err)
	state(1, false, false)
}

func TestBoundedTryRecv(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Bounded[int](100)
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
			s.Release() // the Rust closure drops s here
		})
	})
}

func TestBoundedRecv(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Bounded[int](100)
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

// recvIs receives one value and checks it, from any goroutine.
func recvIs[T any](t *testing.T, ctx context.Context, r *mpmc.Receiver[T], want T) {
	t.Helper()
	v, err := r.Recv(ctx)
	assert.NoError(t, err)
	assert.Equal(t, want, v)
}

func TestBoundedTrySend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Bounded[int](1)
		parallel(func() {
			assert.NoError(t, s.TrySend(1))
			assert.ErrorIs(t, s.TrySend(2), mpmc.ErrFull)
			time.Sleep(ms(1500))
			assert.NoError(t, s.TrySend(3))
			time.Sleep(ms(500))
			assert.ErrorIs(t, s.TrySend(4), mpmc.ErrClosed)
		}, func() {
			time.Sleep(ms(1000))
			v, err := r.TryRecv()
			assert.NoError(t, err)
			assert.Equal(t, 1, v)
			_, err = r.TryRecv()
			assert.ErrorIs(t, err, mpmc.ErrEmpty)
			recvIs(t, ctx, r, 3)
			r.Release()
		})
	})
}

func TestBoundedSend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Bounded[int](1)
		parallel(func() {
			assert.NoError(t, s.Send(ctx, 7))
			time.Sleep(ms(1000))
			assert.NoError(t, s.Send(ctx, 8))
			time.Sleep(ms(1000))
			assert.NoError(t, s.Send(ctx, 9))
			time.Sleep(ms(1000))
			assert.NoError(t, s.Send(ctx, 10))
		}, func() {
			time.Sleep(ms(1500))
			recvIs(t, ctx, r, 7)
			recvIs(t, ctx, r, 8)
			recvIs(t, ctx, r, 9)
		})
		require.Equal(t, 1, r.Len(), "the last send lands in the buffer")
	})
}

// TestBoundedClosed is async-channel 2.5.0's Sender::closed: the signal is
// pending while a receiver lives, fires when the last one goes, and a
// fresh one is ready at once.
func TestBoundedClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, r := mpmc.Bounded[int](1)
		closed := s.Closed()
		parallel(func() {
			select {
			case <-closed:
				t.Error("Closed fired while a receiver lives")
			default:
			}
			<-closed
		}, func() {
			time.Sleep(ms(1000))
			r.Release()
		})
		select {
		case <-s.Closed():
		default:
			t.Fatal("a fresh Closed is not ready on a closed channel")
		}
	})
}

func TestBoundedForceSend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Bounded[int](1)
		parallel(func() {
			forceSendDisplaces(t, s, 7, 0, false)
			time.Sleep(ms(1000))
			forceSendDisplaces(t, s, 8, 7, true)
			time.Sleep(ms(1000))
			forceSendDisplaces(t, s, 9, 0, false)
			time.Sleep(ms(1000))
			forceSendDisplaces(t, s, 10, 0, false)
		}, func() {
			time.Sleep(ms(1500))
			recvIs(t, ctx, r, 8)
			recvIs(t, ctx, r, 9)
			recvIs(t, ctx, r, 10)
		})
	})
}

func forceSendDisplaces(t *testing.T, s *mpmc.Sender[int], v, old int, displaced bool) {
	t.Helper()
	o, d, err := s.ForceSend(v)
	assert.NoError(t, err)
	assert.Equal(t, displaced, d, "ForceSend(%d) displaced", v)
	assert.Equal(t, old, o, "ForceSend(%d) old", v)
}

func TestBoundedSendAfterClose(t *testing.T) {
	ctx := context.Background()
	s, r := mpmc.Bounded[int](100)
	require.NoError(t, s.Send(ctx, 1))
	require.NoError(t, s.Send(ctx, 2))
	require.NoError(t, s.Send(ctx, 3))

	r.Release()

	require.ErrorIs(t, s.Send(ctx, 4), mpmc.ErrClosed)
	require.ErrorIs(t, s.TrySend(5), mpmc.ErrClosed)
	require.ErrorIs(t, s.Send(ctx, 6), mpmc.ErrClosed)
}

func TestBoundedRecvAfterClose(t *testing.T) {
	ctx := context.Background()
	s, r := mpmc.Bounded[int](100)
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

func TestBoundedLen(t *testing.T) {
	const count = 25_000
	const capacity = 1000
	ctx := deadline(t)
	s, r := mpmc.Bounded[int](capacity)
	require.Equal(t, 0, s.Len())
	require.Equal(t, 0, r.Len())

	for range capacity / 10 {
		for i := range 50 {
			require.NoError(t, s.Send(ctx, i))
			require.Equal(t, i+1, s.Len())
		}
		for i := range 50 {
			_, err := r.Recv(ctx)
			require.NoError(t, err)
			require.Equal(t, 50-i-1, r.Len())
		}
	}
	require.Equal(t, 0, s.Len())
	require.Equal(t, 0, r.Len())

	for i := range capacity {
		require.NoError(t, s.Send(ctx, i))
		require.Equal(t, i+1, s.Len())
	}
	for range capacity {
		_, err := r.Recv(ctx)
		require.NoError(t, err)
	}
	require.Equal(t, 0, s.Len())
	require.Equal(t, 0, r.Len())

	parallel(func() {
		for i := range count {
			recvIs(t, ctx, r, i)
			assert.LessOrEqual(t, r.Len(), capacity)
		}
	}, func() {
		for i := range count {
			assert.NoError(t, s.Send(ctx, i))
			assert.LessOrEqual(t, s.Len(), capacity)
		}
	})
	require.Equal(t, 0, s.Len())
	require.Equal(t, 0, r.Len())
}

func TestBoundedReceiverCount(t *testing.T) {
	s, r := mpmc.Bounded[struct{}](5)
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

// TestBoundedSenderCount checks SenderCount after the clones are released,
// where the original checked receiver_count by mistake.
func TestBoundedSenderCount(t *testing.T) {
	s, r := mpmc.Bounded[struct{}](5)
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

func TestBoundedCloseWakesSender(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Bounded[struct{}](1)
		parallel(func() {
			assert.NoError(t, s.Send(ctx, struct{}{}))
			assert.ErrorIs(t, s.Send(ctx, struct{}{}), mpmc.ErrClosed)
		}, func() {
			time.Sleep(ms(1000))
			r.Release()
		})
	})
}

func TestBoundedCloseWakesReceiver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Bounded[struct{}](1)
		parallel(func() {
			_, err := r.Recv(ctx)
			assert.ErrorIs(t, err, mpmc.ErrClosed)
		}, func() {
			time.Sleep(ms(1000))
			s.Release()
		})
	})
}

// TestBoundedForgetBlockedSender is the regression test of async-channel
// #45: a sender that was woken for room but does not run (Rust: a send
// future polled once and kept; here: a goroutine held by a test hook just
// after its wake-up) must not absorb the wake-up meant for the next sender.
func TestBoundedForgetBlockedSender(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s1, r := mpmc.Bounded[int](2)
		s2 := s1.Clone()
		stalled := make(gate)
		mpmc.SetHooks(s1, nil, func(ctx context.Context, _ bool) {
			if isMarked(ctx) {
				stalled.wait()
			}
		})
		parallel(func() {
			assert.NoError(t, s1.Send(ctx, 3))
			assert.NoError(t, s1.Send(ctx, 7))
			assert.NoError(t, s1.Send(marked(ctx), 13)) // pushed by the receive at 200 ms
		}, func() {
			time.Sleep(ms(100))
			assert.NoError(t, s2.Send(ctx, 42))
		}, func() {
			time.Sleep(ms(200))
			recvIs(t, ctx, r, 3)
			recvIs(t, ctx, r, 7)
			time.Sleep(ms(100))
			// Each receive pushed the oldest waiting sender's value for it
			// (as a Go channel's receiver finishes a parked send), so s1's
			// 13 went in at the first receive and was not stalled, and
			// s2's 42 at the second: s2 is not kept waiting by s1.
			v, err := r.TryRecv()
			assert.NoError(t, err)
			assert.Equal(t, 13, v)
			v, err = r.TryRecv()
			assert.NoError(t, err)
			assert.Equal(t, 42, v)
			stalled.open()
		})
	})
}

// TestBoundedForgetBlockedReceiver is the receiving side of the same: a
// receiver woken for a value but held must not keep the next receiver
// from being woken for the next value.
func TestBoundedForgetBlockedReceiver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r1 := mpmc.Bounded[int](2)
		r2 := r1.Clone()
		stalled := make(gate)
		mpmc.SetHooks(s, nil, func(ctx context.Context, _ bool) {
			if isMarked(ctx) {
				stalled.wait()
			}
		})
		parallel(func() {
			// Woken by the 3 at 200 ms, held, then takes 42 at the end.
			recvIs(t, marked(ctx), r1, 42)
		}, func() {
			time.Sleep(ms(100))
			recvIs(t, ctx, r2, 3)
		}, func() {
			time.Sleep(ms(200))
			// ForceSend pushes and notifies, as async-channel's send does;
			// a Send would hand 3 to the waiting r1 directly, and 7 to r2.
			_, _, err := s.ForceSend(3)
			assert.NoError(t, err)
			_, _, err = s.ForceSend(7)
			assert.NoError(t, err)
			time.Sleep(ms(100))
			assert.NoError(t, s.TrySend(42))
			// Leave 42 as the only value for the held receiver.
			recvIs(t, ctx, r2, 7)
			stalled.open()
		})
	})
}

func TestBoundedSPSC(t *testing.T) {
	const count = 100_000
	ctx := deadline(t)
	s, r := mpmc.Bounded[int](3)
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

func TestBoundedMPMC(t *testing.T) {
	const count = 25_000
	const threads = 4
	ctx := deadline(t)
	s, r := mpmc.Bounded[int](3)
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
	for n := range seen {
		require.EqualValues(t, threads, seen[n].Load(), "value %d", n)
	}
}

// TestBoundedMPMCStream is TestBoundedMPMC with the receivers ranging over
// All, the Go rendering of the Rust Stream.
func TestBoundedMPMCStream(t *testing.T) {
	const count = 25_000
	const threads = 4
	ctx := deadline(t)
	s, r := mpmc.Bounded[int](3)
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
	for n := range seen {
		require.EqualValues(t, threads, seen[n].Load(), "value %d", n)
	}
}

func TestBoundedWeak(t *testing.T) {
	ctx := context.Background()
	s, r := mpmc.Bounded[int](3)
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
