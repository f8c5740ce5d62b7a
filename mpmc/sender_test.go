package mpmc_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/allocs"
	"github.com/shardedsink/shardedsink/mpmc"
)

func TestASendIntoAFullChannelWaitsUntilAReceiveMakesRoom(t *testing.T) {
	for _, k := range backends {
		t.Run(k.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				s, r := k.open(1)
				require.NoError(t, s.Send(ctx, 1))
				sent := goSend(ctx, s, "", 2)
				synctest.Wait()
				require.True(t, pending(sent), "Send waits while the channel is full")
				recvIs(t, ctx, r, 1)
				require.NoError(t, <-sent)
				recvIs(t, ctx, r, 2)
			})
		})
	}
}

func TestASendIntoAnUnboundedChannelNeverWaits(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a Send that had to wait would return at once with an error
	s, r := mpmc.Unbounded[int]()
	for i := range 10_000 {
		require.NoError(t, s.Send(ctx, i))
	}
	require.Equal(t, 10_000, r.Len())
}

// TestACancelledSendSentNothing: a Send whose ctx ends while it waits
// returns ctx.Err(), and its value never reaches a receiver.
func TestACancelledSendSentNothing(t *testing.T) {
	for _, k := range backends {
		t.Run(k.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, r := k.open(1)
				require.NoError(t, s.TrySend(1))

				ctx, cancel := context.WithCancel(context.Background())
				sent := goSend(ctx, s, "", 2)
				synctest.Wait()
				cancel()
				require.ErrorIs(t, <-sent, context.Canceled)

				tctx, tcancel := context.WithTimeout(context.Background(), time.Second)
				defer tcancel()
				require.ErrorIs(t, s.Send(tctx, 3), context.DeadlineExceeded)

				require.Equal(t, 1, r.Len())
				s.Release()
				var got []int
				for v := range r.All(context.Background()) {
					got = append(got, v)
				}
				require.Equal(t, []int{1}, got, "only the value sent before")
			})
		})
	}
}

// A Send that can complete at once does, even with a ctx that has ended
// (like semaphore.Weighted.Acquire).
func TestASendThatCanCompleteAtOnceSucceedsEvenWithADoneCtx(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, r := mpmc.Bounded[int](1)
	require.NoError(t, s.Send(ctx, 1))
	require.ErrorIs(t, s.Send(ctx, 2), context.Canceled)
	v, err := r.Recv(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, v)
}

func TestForceSend(t *testing.T) {
	t.Run("bounded: makes room by taking the oldest", func(t *testing.T) {
		for _, k := range backends {
			s, r := k.open(2)
			for i, want := range []struct {
				old       int
				displaced bool
			}{{0, false}, {0, false}, {0, true}, {1, true}, {2, true}} {
				old, displaced, err := s.ForceSend(i)
				require.NoError(t, err)
				require.Equal(t, want.displaced, displaced, "%s: ForceSend(%d)", k.name, i)
				require.Equal(t, want.old, old, "%s: ForceSend(%d)", k.name, i)
			}
			require.Equal(t, 2, r.Len())
			recvIs(t, context.Background(), r, 3)
			recvIs(t, context.Background(), r, 4)
		}
	})
	t.Run("unbounded: never displaces", func(t *testing.T) {
		s, r := mpmc.Unbounded[int]()
		for i := range 300 {
			_, displaced, err := s.ForceSend(i)
			require.NoError(t, err)
			require.False(t, displaced)
		}
		require.Equal(t, 300, r.Len())
	})
	t.Run("wakes a waiting receiver", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s, r := mpmc.Bounded[int](1)
			got := goRecv(context.Background(), r, "")
			synctest.Wait()
			_, _, err := s.ForceSend(5)
			require.NoError(t, err)
			require.Equal(t, result[int]{5, nil}, <-got)
		})
	})
	t.Run("concurrent senders never push the channel past its capacity", func(t *testing.T) {
		// Len cannot tell (a ring's Len never exceeds its Cap), so count:
		// every value accepted is either displaced, back with its
		// ForceSend, or still in the channel at the end, and the channel
		// then holds at most its capacity. A ForceSend that pushed past
		// the capacity, or lost or repeated a value, breaks the count.
		for _, k := range backends {
			t.Run(k.name, func(t *testing.T) {
				s, r := k.open(2)
				var mu sync.Mutex
				accepted := make(map[int]int)
				account := func(v, d int) {
					mu.Lock()
					accepted[v] += d
					mu.Unlock()
				}
				parallel(append(each(2, func(f int) {
					for i := range 2000 {
						v := f*2000 + i
						old, displaced, err := s.ForceSend(v)
						assert.NoError(t, err)
						if err == nil {
							account(v, 1)
						}
						if displaced {
							account(old, -1)
						}
					}
				}), each(2, func(p int) {
					for i := range 2000 {
						v := (2+p)*2000 + i
						if s.TrySend(v) == nil {
							account(v, 1)
						}
						runtime.Gosched()
					}
				})...)...)
				left := make(map[int]int)
				for {
					v, err := r.TryRecv()
					if err != nil {
						break
					}
					left[v]++
				}
				require.LessOrEqual(t, len(left), 2, "the channel held more than its capacity")
				for v, n := range accepted {
					require.Equal(t, n, left[v], "value %d: accepted minus displaced", v)
				}
				for v, n := range left {
					require.Equal(t, 1, n, "value %d was in the channel twice", v)
				}
			})
		}
	})
}

// A thread that waits (Rust: block_on) is woken by a goroutine on another
// OS thread, 500 times over a channel of capacity 1.
func TestAThreadWaitingIsWokenByTheOtherEnd(t *testing.T) {
	ctx := deadline(t)
	s, r := mpmc.Bounded[int](1)
	parallel(func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer s.Release()
		for i := range 500 {
			assert.NoError(t, s.Send(ctx, i))
		}
	}, func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for i := range 500 {
			recvIs(t, ctx, r, i)
		}
		_, err := r.Recv(ctx)
		assert.ErrorIs(t, err, mpmc.ErrClosed)
	})
}

func TestTheTryPathAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	for _, k := range allKinds {
		s, r := k.open(64)
		for range 200 { // warm up: fill an unbounded channel's spare blocks
			_ = s.TrySend(1)
			_, _ = r.TryRecv()
		}
		perRound := allocs.PerCall(1000, func() {
			_ = s.TrySend(1)
			_, _ = r.TryRecv()
			_ = s.Send(ctx, 2)
			_, _ = r.Recv(ctx)
			_, _, _ = s.ForceSend(3)
			_, _ = r.TryRecv()
		})
		require.Zero(t, perRound, k.name)
	}
}
