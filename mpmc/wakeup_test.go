package mpmc_test

// The wake-up protocol tests of zruntime's src/tests/mpmc.rs, ported to
// goroutines. The Rust tests poll futures by hand with wakers that set a
// flag, so that each test states exactly who is woken and who keeps
// waiting. Here each test runs in a testing/synctest bubble: synctest.Wait
// returns once every goroutine of the test is blocked, so "R1 is waiting"
// needs no sleep, and test hooks (export_test.go) count each goroutine's
// wake-ups and can hold a goroutine right after its wake-up (Rust: a
// future woken and not polled again) or right before it blocks.
//
// Not ported, because Go has no counterpart: the tests of a future polled
// again with a new waker, of a stream's separate listener (All is a loop of
// Recv and keeps nothing between values, see
// TestAnAllLoopWhoseBodyStallsDoesNotKeepARecvFromBeingWoken), of Unpin,
// of panicking wakers and message drops, and of Debug formatting.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/mpmc"
)

// stage watches the waiting goroutines of one channel through the test
// hooks. Each goroutine that the test wants to watch passes a ctx named
// with as(ctx, name).
type stage struct {
	mu         sync.Mutex
	wakes      map[string]int  // wake-ups received, per name
	afterWake  map[string]gate // hold name after its next wake-up
	blockGates map[string]gate // hold name before it blocks
}

type nameKey struct{}

func as(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, nameKey{}, name)
}

func nameOf(ctx context.Context) string {
	name, _ := ctx.Value(nameKey{}).(string)
	return name
}

func newStage[T any](s *mpmc.Sender[T]) *stage {
	st := &stage{wakes: map[string]int{}, afterWake: map[string]gate{}, blockGates: map[string]gate{}}
	mpmc.SetHooks(s, func(ctx context.Context, _ bool) {
		st.mu.Lock()
		g := st.blockGates[nameOf(ctx)]
		delete(st.blockGates, nameOf(ctx))
		st.mu.Unlock()
		if g != nil {
			g.wait()
		}
	}, func(ctx context.Context, _ bool) {
		st.mu.Lock()
		st.wakes[nameOf(ctx)]++
		g := st.afterWake[nameOf(ctx)]
		delete(st.afterWake, nameOf(ctx))
		st.mu.Unlock()
		if g != nil {
			g.wait()
		}
	})
	return st
}

// holdAfterWake holds name right after its next wake-up, until the gate
// opens.
func (st *stage) holdAfterWake(name string) gate {
	g := make(gate)
	st.mu.Lock()
	st.afterWake[name] = g
	st.mu.Unlock()
	return g
}

// holdBeforeBlock holds name once it is queued and its retry failed, just
// before it blocks, until the gate opens.
func (st *stage) holdBeforeBlock(name string) gate {
	g := make(gate)
	st.mu.Lock()
	st.blockGates[name] = g
	st.mu.Unlock()
	return g
}

func (st *stage) woken(name string) int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.wakes[name]
}

// result is what a goroutine's call returned, collected for the test.
type result[T any] struct {
	v   T
	err error
}

// goRecv starts a Recv under name and returns where its result arrives.
func goRecv[T any](ctx context.Context, r *mpmc.Receiver[T], name string) <-chan result[T] {
	done := make(chan result[T], 1)
	go func() {
		v, err := r.Recv(as(ctx, name))
		done <- result[T]{v, err}
	}()
	return done
}

// goSend starts a Send under name and returns where its error arrives.
func goSend[T any](ctx context.Context, s *mpmc.Sender[T], name string, v T) <-chan error {
	done := make(chan error, 1)
	go func() { done <- s.Send(as(ctx, name), v) }()
	return done
}

// pending reports whether nothing has arrived on c yet.
func pending[T any](c <-chan T) bool {
	select {
	case <-c:
		return false
	default:
		return true
	}
}

func TestASendWakesAWaitingRecv(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Bounded[int](1)
		st := newStage(s)
		r1 := goRecv(ctx, r, "r1")
		synctest.Wait()
		require.Equal(t, 1, mpmc.WaitingReceivers(r))

		require.NoError(t, s.Send(ctx, 1))
		require.Equal(t, result[int]{1, nil}, <-r1)
		// The send handed its value to r1, as a Go channel's sender does
		// to a parked receiver: r1 woke with it and did not retry.
		require.Equal(t, 0, st.woken("r1"))
		require.Equal(t, 0, mpmc.WaitingReceivers(r))
		require.Equal(t, 0, r.Len(), "the value did not go through the queue")
	})
}

// TestAValueGoesThroughTheQueueWhenValuesAreBufferedAlready: a send hands
// its value to a waiting receiver only when nothing is buffered, so that a
// receiver never gets a sender's value before an older one of that sender.
// A receiver can wait while values are buffered only between a push and
// its wake-up; ForceSend, which always pushes, stages that.
func TestAValueGoesThroughTheQueueWhenValuesAreBufferedAlready(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Bounded[int](2)
		st := newStage(s)
		held := st.holdAfterWake("r1")
		r1 := goRecv(ctx, r, "r1")
		synctest.Wait()
		r2 := goRecv(ctx, r, "r2")
		synctest.Wait()
		_, _, err := s.ForceSend(1) // pushes, wakes r1, which is held
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, 1, mpmc.WaitingReceivers(r), "r2 waits on")
		require.NoError(t, s.Send(ctx, 2)) // 1 is buffered: 2 goes behind it, and wakes r2
		require.Equal(t, result[int]{1, nil}, <-r2, "r2 took the oldest")
		held.open()
		require.Equal(t, result[int]{2, nil}, <-r1)
		require.Equal(t, 1, st.woken("r2"), "r2 was woken to pop, not handed 2")
	})
}

func TestAReceiveWakesAWaitingSend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Bounded[int](1)
		st := newStage(s)
		require.NoError(t, s.Send(ctx, 1))
		s1 := goSend(ctx, s, "s1", 2)
		synctest.Wait()
		require.Equal(t, 1, mpmc.WaitingSenders(s))

		v, err := r.TryRecv()
		require.NoError(t, err)
		require.Equal(t, 1, v)
		require.NoError(t, <-s1)
		// The receive pushed s1's value for it, as a Go channel's receiver
		// finishes a parked send: s1 woke with its send done, and did not
		// retry.
		require.Equal(t, 0, st.woken("s1"))
		require.Equal(t, 0, mpmc.WaitingSenders(s))
		v, err = r.TryRecv()
		require.NoError(t, err)
		require.Equal(t, 2, v)
	})
}

// TestTwoSendsWakeTwoWaitingRecvs: the second send wakes the second waiter
// although the first is notified and has not run (notify-additional).
// Sends that hand their values to waiting receivers directly serve them in
// the order they started to wait, each with its own value.
func TestTwoSendsWakeTwoWaitingRecvs(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				s, r := kind.open(2)
				st := newStage(s)
				held := st.holdAfterWake("r1")
				r1 := goRecv(ctx, r, "r1")
				synctest.Wait()
				r2 := goRecv(ctx, r, "r2")
				synctest.Wait()
				require.Equal(t, 2, mpmc.WaitingReceivers(r))

				// ForceSend pushes and notifies; a Send would hand each
				// value to a waiting receiver directly.
				_, _, err := s.ForceSend(1) // wakes r1, which is held
				require.NoError(t, err)
				synctest.Wait()
				require.Equal(t, 1, st.woken("r1"))
				_, _, err = s.ForceSend(2) // must wake r2
				require.NoError(t, err)
				got2 := <-r2 // r1 is held: r2 takes the oldest
				require.Equal(t, result[int]{1, nil}, got2)

				held.open()
				require.Equal(t, result[int]{2, nil}, <-r1)

				r3 := goRecv(ctx, r, "r3")
				synctest.Wait()
				r4 := goRecv(ctx, r, "r4")
				synctest.Wait()
				require.NoError(t, s.Send(ctx, 3))
				require.NoError(t, s.Send(ctx, 4))
				require.Equal(t, result[int]{3, nil}, <-r3)
				require.Equal(t, result[int]{4, nil}, <-r4)
			})
		})
	}
}

// TestOneSendWakesOnlyTheFirstOfTwoWaitingRecvs: the first recv completes
// and passes nothing on.
func TestOneSendWakesOnlyTheFirstOfTwoWaitingRecvs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Bounded[int](2)
		st := newStage(s)
		r1 := goRecv(ctx, r, "r1")
		synctest.Wait()
		r2 := goRecv(ctx, r, "r2")
		synctest.Wait()

		require.NoError(t, s.Send(ctx, 1))
		require.Equal(t, result[int]{1, nil}, <-r1)
		synctest.Wait()
		require.Equal(t, 0, st.woken("r2"), "r2 was woken for nothing")
		require.True(t, pending(r2))
		require.Equal(t, 1, mpmc.WaitingReceivers(r))

		require.NoError(t, s.Send(ctx, 2))
		require.Equal(t, result[int]{2, nil}, <-r2)
	})
}

func TestTwoReceivesWakeTwoWaitingSends(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Bounded[int](2)
		require.NoError(t, s.Send(ctx, 1))
		require.NoError(t, s.Send(ctx, 2))
		s1 := goSend(ctx, s, "s1", 3)
		synctest.Wait()
		s2 := goSend(ctx, s, "s2", 4)
		synctest.Wait()
		require.Equal(t, 2, mpmc.WaitingSenders(s))

		recvIs(t, ctx, r, 1) // pushes s1's value and wakes s1
		synctest.Wait()
		require.Equal(t, 1, mpmc.WaitingSenders(s))
		recvIs(t, ctx, r, 2) // must do the same for s2
		require.NoError(t, <-s2)
		require.NoError(t, <-s1)
		// The waiting senders' values went in in the order they waited.
		recvIs(t, ctx, r, 3)
		recvIs(t, ctx, r, 4)
	})
}

func TestOneReceiveWakesOnlyTheFirstOfTwoWaitingSends(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Bounded[int](1)
		st := newStage(s)
		require.NoError(t, s.Send(ctx, 1))
		s1 := goSend(ctx, s, "s1", 2)
		synctest.Wait()
		s2 := goSend(ctx, s, "s2", 3)
		synctest.Wait()

		recvIs(t, ctx, r, 1)
		require.NoError(t, <-s1)
		synctest.Wait()
		require.Equal(t, 0, st.woken("s2"), "s2 was woken for nothing")
		require.True(t, pending(s2))

		recvIs(t, ctx, r, 2)
		require.NoError(t, <-s2)
		recvIs(t, ctx, r, 3)
	})
}

// TestANotifiedRecvThatIsCancelledPassesItsNotificationOn: Rust drops a
// woken recv future before polling it; in Go the Recv's ctx ends while
// the wake-up waits in its channel. The Recv takes nothing, and the next
// receiver is woken for the value. When both the wake-up and the ctx are
// ready, Go's select picks either, so each round stages the race and the
// test checks both outcomes, until the cancelled one has been seen.
func TestANotifiedRecvThatIsCancelledPassesItsNotificationOn(t *testing.T) {
	cancelledSeen := 0
	for round := 0; round < 200 && cancelledSeen < 3; round++ {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			s, r := mpmc.Bounded[int](1)
			st := newStage(s)
			held := st.holdBeforeBlock("r1")
			ctx1, cancel1 := context.WithCancel(ctx)
			r1 := goRecv(ctx1, r, "r1")
			synctest.Wait() // r1 queued, held before it blocks
			r2 := goRecv(ctx, r, "r2")
			synctest.Wait()

			_, _, err := s.ForceSend(1) // pushes and notifies r1, the oldest
			require.NoError(t, err)
			cancel1()
			held.open()
			got1 := <-r1
			if got1.err != nil {
				cancelledSeen++
				require.ErrorIs(t, got1.err, context.Canceled)
				require.Equal(t, result[int]{1, nil}, <-r2, "the wake-up passed to r2 with the value")
				return
			}
			// r1's select took the wake-up: it has the value, r2 waits on.
			require.Equal(t, 1, got1.v)
			synctest.Wait()
			require.True(t, pending(r2))
			require.Equal(t, 0, st.woken("r2"))
			require.NoError(t, s.Send(ctx, 2))
			require.Equal(t, result[int]{2, nil}, <-r2)
		})
	}
	require.Positive(t, cancelledSeen, "the select never chose the cancellation")
}

// TestACancelledRecvThatWasHandedAValueReturnsIt: a send handed its value
// to the waiting r1, then r1's ctx ended before r1 ran: whichever case
// its select picks, r1 returns the value, which nobody else gets.
func TestACancelledRecvThatWasHandedAValueReturnsIt(t *testing.T) {
	for round := 0; round < 20; round++ {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			s, r := mpmc.Bounded[int](1)
			st := newStage(s)
			held := st.holdBeforeBlock("r1")
			ctx1, cancel1 := context.WithCancel(ctx)
			r1 := goRecv(ctx1, r, "r1")
			synctest.Wait() // r1 parked, held before it blocks
			require.NoError(t, s.Send(ctx, 1))
			cancel1()
			held.open()
			require.Equal(t, result[int]{1, nil}, <-r1)
			_, err := r.TryRecv()
			require.ErrorIs(t, err, mpmc.ErrEmpty)
		})
	}
}

func TestACancelledWaitingSendHasSentOnlyIfAReceivePushedItsValue(t *testing.T) {
	// A receive pushes the oldest waiting sender's value for it, so a
	// Send whose ctx ends after that has sent, and reports it, whichever
	// case its select picks; one whose ctx ends before sent nothing, and
	// the room goes to the next waiting sender.
	for _, cancelFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("cancelled first: %v", cancelFirst), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				s, r := mpmc.Bounded[int](1)
				require.NoError(t, s.Send(ctx, 1))
				ctx1, cancel1 := context.WithCancel(ctx)
				s1 := goSend(ctx1, s, "s1", 2)
				synctest.Wait()
				s2 := goSend(ctx, s, "s2", 3)
				synctest.Wait()
				require.Equal(t, 2, mpmc.WaitingSenders(s))

				if cancelFirst {
					cancel1()
					require.ErrorIs(t, <-s1, context.Canceled)
					recvIs(t, ctx, r, 1) // the room goes to s2
					require.NoError(t, <-s2)
					recvIs(t, ctx, r, 3)
					require.Equal(t, 0, r.Len(), "the cancelled send sent nothing")
					return
				}
				recvIs(t, ctx, r, 1) // pushes s1's value
				cancel1()
				require.NoError(t, <-s1, "s1's value was sent: its Send says so")
				synctest.Wait()
				require.True(t, pending(s2))
				recvIs(t, ctx, r, 2)
				require.NoError(t, <-s2)
				recvIs(t, ctx, r, 3)
			})
		})
	}
}

func TestANotifiedRecvThatFindsTheMessageTakenGoesBackToWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Bounded[int](1)
		st := newStage(s)
		held := st.holdAfterWake("r1")
		r1 := goRecv(ctx, r, "r1")
		synctest.Wait()

		_, _, err := s.ForceSend(1) // pushes and wakes r1, held
		require.NoError(t, err)
		synctest.Wait()
		v, err := r.TryRecv() // another receiver takes the value first
		require.NoError(t, err)
		require.Equal(t, 1, v)
		held.open()
		synctest.Wait()
		require.True(t, pending(r1))
		require.Equal(t, 1, mpmc.WaitingReceivers(r), "r1 waits again")

		require.NoError(t, s.Send(ctx, 2)) // handed to r1: no second retry
		require.Equal(t, result[int]{2, nil}, <-r1)
		require.Equal(t, 1, st.woken("r1"))
	})
}

func TestTheRoomAReceiveMakesGoesToTheOldestWaitingSend(t *testing.T) {
	// A waiting sender's value is pushed by the receive that makes room,
	// before any other sender can take that room: a TrySend that comes
	// after the receive finds the channel full again, and the waiting
	// sender is done.
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Bounded[int](1)
		require.NoError(t, s.Send(ctx, 1))
		s1 := goSend(ctx, s, "s1", 2)
		synctest.Wait()

		recvIs(t, ctx, r, 1)
		require.ErrorIs(t, s.TrySend(3), mpmc.ErrFull, "the room went to s1")
		require.NoError(t, <-s1)
		require.Equal(t, 0, mpmc.WaitingSenders(s))
		recvIs(t, ctx, r, 2)
	})
}

// TestASendWokenForRoomSucceedsThoughTheChannelClosesBeforeItRuns: the
// receive that made room pushed the waiting send's value before the close,
// so the send succeeded, and the value is received after the close.
func TestASendWokenForRoomSucceedsThoughTheChannelClosesBeforeItRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Bounded[int](1)
		require.NoError(t, s.Send(ctx, 1))
		s1 := goSend(ctx, s, "s1", 2)
		synctest.Wait()

		recvIs(t, ctx, r, 1)
		require.True(t, r.Close())
		require.NoError(t, <-s1)
		recvIs(t, ctx, r, 2)
		_, err := r.TryRecv()
		require.ErrorIs(t, err, mpmc.ErrClosed)
	})
}

func TestClosingWakesEveryWaitingSend(t *testing.T) {
	for _, closeBy := range []string{"sender", "receiver"} {
		t.Run("closed by the "+closeBy, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				s, r := mpmc.Bounded[int](1)
				require.NoError(t, s.Send(ctx, 0))
				var sends []<-chan error
				for i := range 3 {
					sends = append(sends, goSend(ctx, s, "", i+1))
				}
				synctest.Wait()
				require.Equal(t, 3, mpmc.WaitingSenders(s))

				if closeBy == "sender" {
					require.True(t, s.Close())
				} else {
					require.True(t, r.Close())
				}
				for _, c := range sends {
					require.ErrorIs(t, <-c, mpmc.ErrClosed)
				}
				recvIs(t, ctx, r, 0) // what was buffered is still there
				_, err := r.Recv(ctx)
				require.ErrorIs(t, err, mpmc.ErrClosed)
			})
		})
	}
}

func TestClosingWakesEveryWaitingRecvAndAll(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				s, r := kind.open(1)
				var recvs []<-chan result[int]
				for range 3 {
					recvs = append(recvs, goRecv(ctx, r, ""))
				}
				alls := make(chan int, 3)
				for range 3 {
					go func() {
						n := 0
						for range r.All(ctx) {
							n++
						}
						alls <- n
					}()
				}
				synctest.Wait()
				require.Equal(t, 6, mpmc.WaitingReceivers(r))

				require.True(t, s.Close())
				for _, c := range recvs {
					require.ErrorIs(t, (<-c).err, mpmc.ErrClosed)
				}
				for range 3 {
					require.Equal(t, 0, <-alls)
				}
			})
		})
	}
}

func TestReleasingTheLastSenderWakesWaitingRecvsAndAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Unbounded[int]()
		s2 := s.Clone()
		r1 := goRecv(ctx, r, "")
		allDone := make(chan struct{})
		go func() {
			for range r.All(ctx) {
			}
			close(allDone)
		}()
		synctest.Wait()

		s.Release() // not the last: wakes nobody
		synctest.Wait()
		require.True(t, pending(r1))
		require.Equal(t, 2, mpmc.WaitingReceivers(r))

		s2.Release()
		require.ErrorIs(t, (<-r1).err, mpmc.ErrClosed)
		<-allDone
	})
}

func TestReleasingTheLastReceiverWakesWaitingSends(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Bounded[int](1)
		r2 := r.Clone()
		require.NoError(t, s.Send(ctx, 1))
		s1 := goSend(ctx, s, "", 2)
		synctest.Wait()

		r.Release() // not the last: wakes nobody, drops nothing
		synctest.Wait()
		require.True(t, pending(s1))
		require.Equal(t, 1, s.Len())

		r2.Release()
		require.ErrorIs(t, <-s1, mpmc.ErrClosed)
		require.Equal(t, 0, s.Len(), "the last receiver dropped what was buffered")
	})
}

// TestAnAllLoopWhoseBodyStallsDoesNotKeepARecvFromBeingWoken is zruntime's
// "a stream woken and never polled again does not keep a recv from being
// woken". All keeps no registration between values, so a loop whose body
// is busy holds no wake-up.
func TestAnAllLoopWhoseBodyStallsDoesNotKeepARecvFromBeingWoken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Bounded[int](4)
		stall := make(gate)
		got := make(chan int, 1)
		go func() {
			for v := range r.All(ctx) {
				got <- v
				stall.wait() // the body stalls with the loop mid-iteration
				break
			}
		}()
		synctest.Wait()
		require.NoError(t, s.Send(ctx, 1))
		require.Equal(t, 1, <-got)

		r1 := goRecv(ctx, r, "")
		synctest.Wait()
		require.NoError(t, s.Send(ctx, 2))
		require.Equal(t, result[int]{2, nil}, <-r1)
		stall.open()
	})
}

// TestARecvThatCompletedHoldsNoNotificationALaterOneNeeds: a Recv woken and
// completed gives its waiter back clean, and the next Recv to wait (which
// reuses it) sleeps until a value comes.
func TestARecvThatCompletedHoldsNoNotificationALaterOneNeeds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Bounded[int](1)
		st := newStage(s)
		r1 := goRecv(ctx, r, "r1")
		synctest.Wait()
		_, _, err := s.ForceSend(1) // pushes and notifies: r1 retries
		require.NoError(t, err)
		require.Equal(t, result[int]{1, nil}, <-r1)

		r2 := goRecv(ctx, r, "r2")
		synctest.Wait()
		require.True(t, pending(r2))
		require.Equal(t, 0, st.woken("r2"))
		_, _, err = s.ForceSend(2)
		require.NoError(t, err)
		require.Equal(t, result[int]{2, nil}, <-r2)
		require.Equal(t, 1, st.woken("r2"))

		r3 := goRecv(ctx, r, "r3") // and after a hand-off, likewise
		synctest.Wait()
		require.NoError(t, s.Send(ctx, 3))
		require.Equal(t, result[int]{3, nil}, <-r3)
		r4 := goRecv(ctx, r, "r4")
		synctest.Wait()
		require.True(t, pending(r4))
		require.NoError(t, s.Send(ctx, 4))
		require.Equal(t, result[int]{4, nil}, <-r4)
	})
}

func TestASendThatCompletedHoldsNoNotificationALaterOneNeeds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, r := mpmc.Bounded[int](1)
		st := newStage(s)
		require.NoError(t, s.Send(ctx, 1))
		s1 := goSend(ctx, s, "s1", 2)
		synctest.Wait()
		recvIs(t, ctx, r, 1)
		require.NoError(t, <-s1)

		s2 := goSend(ctx, s, "s2", 3)
		synctest.Wait()
		require.True(t, pending(s2))
		require.Equal(t, 0, st.woken("s2"))
		recvIs(t, ctx, r, 2)
		require.NoError(t, <-s2)
		recvIs(t, ctx, r, 3)
	})
}

// kinds are the channel kinds that tests run over: bounded on the default
// ring, and unbounded (which ignores the capacity).
var kinds = []struct {
	name string
	open func(capacity int) (*mpmc.Sender[int], *mpmc.Receiver[int])
}{
	{"bounded", mpmc.Bounded[int]},
	{"unbounded", func(int) (*mpmc.Sender[int], *mpmc.Receiver[int]) { return mpmc.Unbounded[int]() }},
}

var _ = assert.True // assert is used by the helpers shared with the other files
