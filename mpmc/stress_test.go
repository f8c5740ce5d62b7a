package mpmc_test

// The stress tests of zruntime's src/tests/mpmc.rs, on goroutines: every
// value received exactly once and in order per sender, with receivers that
// wait, poll, range, batch and cancel at random; ping-pong races for lost
// wake-ups; and a close racing with waiting operations. A lost wake-up
// shows as a Recv or Send that runs into the test's deadline (lostWakeup),
// which fails the test, never as a hang.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/mpmc"
	"github.com/shardedsink/shardedsink/ring/chanring"
	"github.com/shardedsink/shardedsink/ring/mutex"
)

// scaled returns n, or n/4 under -short.
func scaled(n int) int {
	if testing.Short() {
		return max(1, n/4)
	}
	return n
}

// A style is how a stress receiver takes values: it calls got for each
// value until the channel is closed and empty, and reports a lost wake-up
// (its wait ran into the test deadline) with t.Error.
type style struct {
	name string
	run  func(t *testing.T, ctx context.Context, r *mpmc.Receiver[uint64], got func(uint64))
}

var (
	// Recv waits for each value.
	recvStyle = style{"Recv", func(t *testing.T, ctx context.Context, r *mpmc.Receiver[uint64], got func(uint64)) {
		for {
			v, err := r.Recv(ctx)
			if err != nil {
				checkEnd(t, ctx, err)
				return
			}
			got(v)
		}
	}}
	// TryRecv polls, yielding the processor while the channel is empty.
	tryRecvStyle = style{"TryRecv", func(t *testing.T, ctx context.Context, r *mpmc.Receiver[uint64], got func(uint64)) {
		for {
			v, err := r.TryRecv()
			switch {
			case err == nil:
				got(v)
			case errors.Is(err, mpmc.ErrEmpty):
				if ctx.Err() != nil {
					checkEnd(t, ctx, ctx.Err())
					return
				}
				runtime.Gosched()
			default:
				checkEnd(t, ctx, err)
				return
			}
		}
	}}
	// All ranges over the channel (Rust: a Stream).
	allStyle = style{"All", func(t *testing.T, ctx context.Context, r *mpmc.Receiver[uint64], got func(uint64)) {
		for v := range r.All(ctx) {
			got(v)
		}
		if ctx.Err() != nil {
			checkEnd(t, ctx, ctx.Err())
		}
	}}
	// RecvMany takes up to three values a time.
	recvManyStyle = style{"RecvMany", func(t *testing.T, ctx context.Context, r *mpmc.Receiver[uint64], got func(uint64)) {
		var buf [3]uint64
		for {
			n, err := r.RecvMany(ctx, buf[:])
			if err != nil {
				require.Zero(t, n)
				checkEnd(t, ctx, err)
				return
			}
			for _, v := range buf[:n] {
				got(v)
			}
		}
	}}
	// Cancelling gives each Recv a random timeout of up to 50µs, so that
	// cancellations race with wake-ups all the time; a Recv cancelled has
	// taken nothing, and the receiver tries again.
	cancellingStyle = style{"Cancelling", func(t *testing.T, ctx context.Context, r *mpmc.Receiver[uint64], got func(uint64)) {
		for {
			rctx, cancel := context.WithTimeout(ctx, time.Duration(rand.IntN(50_000)))
			v, err := r.Recv(rctx)
			cancel()
			switch {
			case err == nil:
				got(v)
			case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
				// Gave up in time: nothing taken, try again.
			default:
				checkEnd(t, ctx, err)
				return
			}
		}
	}}
)

// checkEnd accepts ErrClosed as the end of a receiver and reports anything
// else: a wait that ran into the test deadline lost a wake-up.
func checkEnd(t *testing.T, ctx context.Context, err error) {
	if errors.Is(err, mpmc.ErrClosed) {
		return
	}
	if ctx.Err() != nil {
		t.Errorf("a receiver waited past the test deadline: lost wake-up (%v)", err)
		return
	}
	t.Errorf("unexpected receive error: %v", err)
}

// senderStyles are how the stress senders send, by index: waiting Send;
// TrySend, yielding while full; Send with random tiny timeouts, retrying
// the same value (a cancelled Send has sent nothing, so order holds).
func sendAll(t *testing.T, ctx context.Context, s *mpmc.Sender[uint64], id, count int) {
	defer s.Release()
	for k := range count {
		v := uint64(id)<<32 | uint64(k)
		switch (id + k) % 3 {
		case 0:
			if err := s.Send(ctx, v); err != nil {
				t.Errorf("sender %d: Send: %v (a lost wake-up if the deadline passed)", id, err)
				return
			}
		case 1:
			for {
				err := s.TrySend(v)
				if err == nil {
					break
				}
				if !errors.Is(err, mpmc.ErrFull) || ctx.Err() != nil {
					t.Errorf("sender %d: TrySend: %v", id, err)
					return
				}
				runtime.Gosched()
			}
		case 2:
			for {
				sctx, cancel := context.WithTimeout(ctx, time.Duration(rand.IntN(50_000)))
				err := s.Send(sctx, v)
				cancel()
				if err == nil {
					break
				}
				if !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
					t.Errorf("sender %d: Send: %v (a lost wake-up if the deadline passed)", id, err)
					return
				}
			}
		}
	}
}

// exactlyOnce runs senders×count values through the channel against the
// receivers (two of each style), then checks that every value arrived
// exactly once and that each receiver saw each sender's values in order.
func exactlyOnce(t *testing.T, s *mpmc.Sender[uint64], r *mpmc.Receiver[uint64], senders, count int, styles []style) {
	ctx := deadline(t)
	receivers := make([][]uint64, 2*len(styles))
	var wg sync.WaitGroup
	for i := range receivers {
		st := styles[i%len(styles)]
		rx := r.Clone()
		wg.Go(func() {
			defer rx.Release()
			st.run(t, ctx, rx, func(v uint64) { receivers[i] = append(receivers[i], v) })
		})
	}
	r.Release()
	for id := range senders {
		tx := s.Clone()
		wg.Go(func() { sendAll(t, ctx, tx, id, count) })
	}
	s.Release() // the last sender's Release closes the channel
	wg.Wait()
	if t.Failed() {
		return
	}

	seen := make([][]int, senders)
	for i := range seen {
		seen[i] = make([]int, count)
	}
	for i, got := range receivers {
		last := make([]int, senders)
		for j := range last {
			last[j] = -1
		}
		for _, v := range got {
			id, k := int(v>>32), int(uint32(v))
			require.Less(t, id, senders)
			require.Less(t, k, count)
			require.Greater(t, k, last[id], "receiver %d (%s) got sender %d's values out of order",
				i, styles[i%len(styles)].name, id)
			last[id] = k
			seen[id][k]++
		}
	}
	for id := range seen {
		for k, n := range seen[id] {
			require.Equal(t, 1, n, "value %d of sender %d received %d times", k, id, n)
		}
	}
}

var allStyles = []style{recvStyle, tryRecvStyle, allStyle, recvManyStyle, cancellingStyle}

func TestEveryMessageIsReceivedOnce(t *testing.T) {
	opens := []struct {
		name string
		open func() (*mpmc.Sender[uint64], *mpmc.Receiver[uint64])
	}{
		{"capacity 1", func() (*mpmc.Sender[uint64], *mpmc.Receiver[uint64]) { return mpmc.Bounded[uint64](1) }},
		{"capacity 2", func() (*mpmc.Sender[uint64], *mpmc.Receiver[uint64]) { return mpmc.Bounded[uint64](2) }},
		{"unbounded", mpmc.Unbounded[uint64]},
		{"capacity 2 on the mutex ring", func() (*mpmc.Sender[uint64], *mpmc.Receiver[uint64]) {
			return mpmc.BoundedOn(mutex.Factory[uint64](2))
		}},
		{"capacity 2 on the chanring", func() (*mpmc.Sender[uint64], *mpmc.Receiver[uint64]) {
			return mpmc.BoundedOn(chanring.Factory[uint64](2))
		}},
	}
	for _, o := range opens {
		t.Run(o.name, func(t *testing.T) {
			for range 2 {
				s, r := o.open()
				exactlyOnce(t, s, r, 4, scaled(1000), allStyles)
			}
		})
	}
}

// TestEveryMessageIsReceivedOnceByReceiversThatOnlyWait has no polling
// receiver to pick up a value that a lost wake-up left behind.
func TestEveryMessageIsReceivedOnceByReceiversThatOnlyWait(t *testing.T) {
	for _, kind := range []string{"capacity 1", "unbounded"} {
		t.Run(kind, func(t *testing.T) {
			for range 2 {
				s, r := mpmc.Bounded[uint64](1)
				if kind == "unbounded" {
					s, r = mpmc.Unbounded[uint64]()
				}
				exactlyOnce(t, s, r, 4, scaled(2000), []style{recvStyle, allStyle})
			}
		})
	}
}

// TestARecvIsNotLeftAsleepByAMessageThatComesAsItGoesToWait plays ping-pong
// over two channels of capacity 1: each Recv starts as the other side's
// Send lands, thousands of times.
func TestARecvIsNotLeftAsleepByAMessageThatComesAsItGoesToWait(t *testing.T) {
	for _, viaAll := range []bool{false, true} {
		name := "Recv"
		if viaAll {
			name = "All"
		}
		t.Run(name, func(t *testing.T) {
			ctx := deadline(t)
			rounds := scaled(5000)
			pingS, pingR := mpmc.Bounded[int](1)
			pongS, pongR := mpmc.Bounded[int](1)
			parallel(func() {
				defer pingS.Release()
				for i := range rounds {
					if !assert.NoError(t, pingS.Send(ctx, i)) {
						return
					}
					v, err := pongR.Recv(ctx)
					if !assert.NoError(t, err, "round %d: lost wake-up", i) || !assert.Equal(t, i, v) {
						return
					}
				}
			}, func() {
				defer pongS.Release()
				next := 0
				if viaAll {
					for v := range pingR.All(ctx) {
						if !assert.Equal(t, next, v) || !assert.NoError(t, pongS.Send(ctx, v)) {
							return
						}
						next++
					}
				} else {
					for {
						v, err := pingR.Recv(ctx)
						if errors.Is(err, mpmc.ErrClosed) {
							break
						}
						if !assert.NoError(t, err, "round %d: lost wake-up", next) || !assert.NoError(t, pongS.Send(ctx, v)) {
							return
						}
						next++
					}
				}
				assert.Equal(t, rounds, next, "all rounds played (ctx: %v)", ctx.Err())
			})
		})
	}
}

// TestASendIsNotLeftAsleepByRoomThatComesAsItGoesToWait keeps a channel of
// capacity 1 full, so that each Send goes to wait as the receiver makes
// room, thousands of times.
func TestASendIsNotLeftAsleepByRoomThatComesAsItGoesToWait(t *testing.T) {
	ctx := deadline(t)
	rounds := scaled(5000)
	s, r := mpmc.Bounded[int](1)
	parallel(func() {
		defer s.Release()
		for i := range rounds {
			if !assert.NoError(t, s.Send(ctx, i), "round %d: lost wake-up", i) {
				return
			}
		}
	}, func() {
		for i := range rounds {
			v, err := r.Recv(ctx)
			if !assert.NoError(t, err, "round %d", i) || !assert.Equal(t, i, v) {
				return
			}
			if i%2 == 0 {
				runtime.Gosched() // let the sender go to wait
			}
		}
	})
}

// TestACloseRacingWithWaitingOperationsStrandsNoneOfThem: receivers waiting
// on an empty channel and senders waiting on a full one, and a close that
// comes after 0 to 7 yields, by Close on either end or by the last Release
// of the end that is not waiting. Every receiver gets ErrClosed, every
// sender ErrClosed with nothing sent.
func TestACloseRacingWithWaitingOperationsStrandsNoneOfThem(t *testing.T) {
	ctx := deadline(t)
	const waiters = 4
	for round := range scaled(240) {
		how := []string{"Close on the sender", "Close on the receiver", "last Release"}[round%3]
		t.Run(fmt.Sprint(round, " ", how), func(t *testing.T) {
			emptyS, emptyR := mpmc.Bounded[int](1)
			fullS, fullR := mpmc.Bounded[int](1)
			require.NoError(t, fullS.TrySend(-1))

			var wg sync.WaitGroup
			for i := range waiters {
				r := emptyR.Clone()
				wg.Go(func() {
					defer r.Release()
					_, err := r.Recv(ctx)
					assert.ErrorIs(t, err, mpmc.ErrClosed, "receiver %d", i)
				})
				s := fullS.Clone()
				wg.Go(func() {
					defer s.Release()
					assert.ErrorIs(t, s.Send(ctx, i), mpmc.ErrClosed, "sender %d", i)
				})
			}
			// The waiting sides hold clones; drop the originals now so that
			// a last Release below is really the last. A weak receiver is
			// kept to close through a receiver.
			weakR := emptyR.Downgrade()
			emptyR.Release()
			fullS.Release()
			for range rand.IntN(8) {
				runtime.Gosched()
			}
			switch how {
			case "Close on the sender":
				emptyS.Close()
				fullR.Close()
			case "Close on the receiver":
				// Nothing has closed the empty channel yet and the waiting
				// receivers hold clones, so the upgrade succeeds.
				closer, ok := weakR.Upgrade()
				require.True(t, ok)
				require.True(t, closer.Close())
				closer.Release()
				require.True(t, fullR.Close())
			}
			emptyS.Release() // last sender of the empty channel
			if how == "last Release" {
				fullR.Release() // last receiver of the full one: closes and drops -1
				wg.Wait()
				return
			}
			wg.Wait()
			// Only the value put in before the waiters is in the channel.
			v, err := fullR.TryRecv()
			require.NoError(t, err)
			require.Equal(t, -1, v)
			_, err = fullR.TryRecv()
			require.ErrorIs(t, err, mpmc.ErrClosed)
			fullR.Release()
		})
	}
}
