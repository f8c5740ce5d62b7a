package mpmc_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/mpmc"
)

func TestOneReceiverServesSeveralRecvsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Bounded[int](2)
		first := goRecv(ctx, r, "")
		synctest.Wait()
		second := goRecv(ctx, r, "")
		synctest.Wait()
		require.Equal(t, 2, mpmc.WaitingReceivers(r))
		require.NoError(t, s.Send(ctx, 1))
		require.NoError(t, s.Send(ctx, 2))
		a, b := <-first, <-second
		require.NoError(t, a.err)
		require.NoError(t, b.err)
		// Both were woken, first the first; which one runs first is up to
		// the scheduler.
		require.ElementsMatch(t, []int{1, 2}, []int{a.v, b.v})
	})
}

// TestACancelledRecvTookNothing: a Recv whose ctx ends while it waits
// returns ctx.Err(), and the next value goes to the next Recv.
func TestACancelledRecvTookNothing(t *testing.T) {
	for _, k := range allKinds {
		t.Run(k.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, r := k.open(1)
				ctx, cancel := context.WithCancel(context.Background())
				got := goRecv(ctx, r, "")
				synctest.Wait()
				cancel()
				require.ErrorIs(t, (<-got).err, context.Canceled)

				tctx, tcancel := context.WithTimeout(context.Background(), time.Second)
				defer tcancel()
				_, err := r.Recv(tctx)
				require.ErrorIs(t, err, context.DeadlineExceeded)
				require.Equal(t, 0, mpmc.WaitingReceivers(r), "the cancelled waiters left the queue")

				require.NoError(t, s.TrySend(7))
				recvIs(t, context.Background(), r, 7)
			})
		})
	}
}

func TestRecvMany(t *testing.T) {
	ctx := context.Background()
	t.Run("takes what is buffered, up to len(dst)", func(t *testing.T) {
		s, r := mpmc.Bounded[int](8)
		for i := range 5 {
			require.NoError(t, s.TrySend(i))
		}
		dst := make([]int, 3)
		n, err := r.RecvMany(ctx, dst)
		require.NoError(t, err)
		require.Equal(t, 3, n)
		require.Equal(t, []int{0, 1, 2}, dst)
		n, err = r.RecvMany(ctx, dst)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		require.Equal(t, []int{3, 4}, dst[:n])
	})
	t.Run("writes nothing past the count it returns", func(t *testing.T) {
		for _, k := range allKinds {
			t.Run(k.name, func(t *testing.T) {
				s, r := k.open(8)
				require.NoError(t, s.TrySend(1))
				require.NoError(t, s.TrySend(2))
				dst := []int{-7, -7, -7, -7}
				n, err := r.RecvMany(ctx, dst)
				require.NoError(t, err)
				require.Equal(t, 2, n)
				require.Equal(t, []int{1, 2, -7, -7}, dst)
			})
		}
	})
	t.Run("waits for the first value only", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s, r := mpmc.Unbounded[int]()
			type res struct {
				n   int
				err error
			}
			done := make(chan res, 1)
			dst := make([]int, 4)
			go func() {
				n, err := r.RecvMany(ctx, dst)
				done <- res{n, err}
			}()
			synctest.Wait()
			require.NoError(t, s.TrySend(9))
			got := <-done
			require.NoError(t, got.err)
			require.Equal(t, 1, got.n)
			require.Equal(t, 9, dst[0])
		})
	})
	t.Run("an empty dst returns at once", func(t *testing.T) {
		_, r := mpmc.Bounded[int](1)
		n, err := r.RecvMany(ctx, nil)
		require.NoError(t, err)
		require.Zero(t, n)
	})
	t.Run("ErrClosed once closed and empty, ctx.Err when ctx ends", func(t *testing.T) {
		s, r := mpmc.Bounded[int](2)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		n, err := r.RecvMany(cctx, make([]int, 2))
		require.ErrorIs(t, err, context.Canceled)
		require.Zero(t, n)
		require.NoError(t, s.TrySend(1))
		s.Release()
		n, err = r.RecvMany(ctx, make([]int, 2))
		require.NoError(t, err)
		require.Equal(t, 1, n)
		n, err = r.RecvMany(ctx, make([]int, 2))
		require.ErrorIs(t, err, mpmc.ErrClosed)
		require.Zero(t, n)
	})
	t.Run("wakes as many waiting senders as it freed slots", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s, r := mpmc.Bounded[int](3)
			for i := range 3 {
				require.NoError(t, s.TrySend(i))
			}
			var sends []<-chan error
			for i := range 3 {
				sends = append(sends, goSend(ctx, s, "", 10+i))
				synctest.Wait()
			}
			n, err := r.RecvMany(ctx, make([]int, 3))
			require.NoError(t, err)
			require.Equal(t, 3, n)
			for _, c := range sends {
				require.NoError(t, <-c)
			}
			require.Equal(t, 3, r.Len())
		})
	})
}

func TestAll(t *testing.T) {
	ctx := context.Background()
	t.Run("a receiver is a stream of its values", func(t *testing.T) {
		s, r := mpmc.Bounded[int](2)
		go func() {
			defer s.Release() // ends the stream once the values are taken
			for i := range 100 {
				_ = s.Send(ctx, i)
			}
		}()
		want := 0
		for v := range r.All(ctx) {
			require.Equal(t, want, v)
			want++
		}
		require.Equal(t, 100, want)
	})
	t.Run("ends when ctx ends", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s, r := mpmc.Bounded[int](2)
			require.NoError(t, s.TrySend(1))
			tctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			var got []int
			for v := range r.All(tctx) {
				got = append(got, v)
			}
			require.Equal(t, []int{1}, got)
			require.ErrorIs(t, tctx.Err(), context.DeadlineExceeded)
		})
	})
	t.Run("ends on cancel while values keep coming", func(t *testing.T) {
		for _, k := range allKinds {
			t.Run(k.name, func(t *testing.T) {
				s, r := k.open(1000)
				for i := range 1000 {
					require.NoError(t, s.TrySend(i))
				}
				cctx, cancel := context.WithCancel(ctx)
				defer cancel()
				n := 0
				for v := range r.All(cctx) {
					require.Equal(t, n, v)
					n++
					if n == 10 {
						cancel()
					}
				}
				require.Equal(t, 10, n, "All went on after ctx was cancelled")
				require.Equal(t, 990, r.Len(), "the values after the cancel stay in the channel")
			})
		}
	})
	t.Run("yields nothing once ctx is done, even with values buffered", func(t *testing.T) {
		s, r := mpmc.Unbounded[int]()
		require.NoError(t, s.TrySend(1))
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		for v := range r.All(cctx) {
			t.Fatalf("All yielded %d with its ctx done", v)
		}
		require.Equal(t, 1, r.Len())
	})
	t.Run("breaking out takes no further value", func(t *testing.T) {
		s, r := mpmc.Bounded[int](3)
		for i := range 3 {
			require.NoError(t, s.TrySend(i))
		}
		for v := range r.All(ctx) {
			require.Equal(t, 0, v)
			break
		}
		require.Equal(t, 2, r.Len())
	})
}
