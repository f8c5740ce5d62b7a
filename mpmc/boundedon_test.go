package mpmc_test

// BoundedOn's edges: rings that are closed, or closed behind the channel's
// back, rings that report a capacity below 1, and rings that look closable
// by their method names but do not say so through mpmc.ClosableRing.

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/mpmc"
	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/vyukov"
)

// The rings of this repository that close themselves say so through the
// exported interface, so BoundedOn uses them without the guard.
var _ mpmc.ClosableRing[int] = (*vyukov.Ring[int])(nil)

// within fails the test unless f returns within a real-time bound. It is for
// calls that today's defects make hang or spin (a spinning goroutine keeps a
// testing/synctest bubble from ever advancing its clock): the test then fails
// instead of running into the test binary's timeout. Nothing waits on the
// bound when f returns.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return within 10s", what)
	}
}

func TestBoundedOnPanicsOnARingThatIsAlreadyClosed(t *testing.T) {
	r := vyukov.New[int](2)
	r.Close()
	require.PanicsWithValue(t,
		"mpmc: BoundedOn needs an open ring, got one that is already closed",
		func() { mpmc.BoundedOn[int](r) })
}

// capRing reports a capacity it does not have.
type capRing struct {
	ring.Ring[int]
	cap int
}

func (r capRing) Cap() int { return r.cap }

func TestBoundedOnPanicsOnARingWhoseCapIsBelowOne(t *testing.T) {
	for _, c := range []int{0, -1} {
		require.PanicsWithValue(t,
			fmt.Sprint("mpmc: BoundedOn needs a ring whose Cap() is at least 1, got ", c),
			func() { mpmc.BoundedOn[int](capRing{vyukov.New[int](2), c}) })
	}
}

// A ring whose holder closes it after BoundedOn (which the doc forbids)
// must not hang the channel: the send that finds the ring closed closes the
// channel, waiting receivers get ErrClosed, and Close and the last Release
// return.
func TestARingClosedBehindTheChannelsBackClosesTheChannel(t *testing.T) {
	ctx := deadline(t)
	vr := vyukov.New[int](2)
	s, r := mpmc.BoundedOn[int](vr)
	got := goRecv(ctx, r, "")
	for mpmc.WaitingReceivers(r) == 0 {
		runtime.Gosched()
	}
	vr.Close()
	require.ErrorIs(t, s.TrySend(1), mpmc.ErrClosed)
	select {
	case res := <-got:
		require.ErrorIs(t, res.err, mpmc.ErrClosed)
	case <-time.After(10 * time.Second):
		t.Fatal("Send reports ErrClosed, yet a Recv still waits")
	}
	require.True(t, r.IsClosed())
	within(t, "Close", func() { require.False(t, s.Close()) })
	within(t, "the last Release", func() { s.Release(); r.Release() })
}

// The same with nobody sending: Close and Release are what the channel
// learns the close from, and they return.
func TestCloseReturnsOnARingClosedBehindTheChannelsBack(t *testing.T) {
	for _, how := range []string{"Close", "last Release"} {
		t.Run(how, func(t *testing.T) {
			ctx := deadline(t)
			vr := vyukov.New[int](2)
			s, r := mpmc.BoundedOn[int](vr)
			require.NoError(t, s.TrySend(7))
			vr.Close()
			switch how {
			case "Close":
				within(t, "Close", func() { require.True(t, s.Close(), "this call closed the channel") })
				s.Release()
			case "last Release":
				within(t, "the last Release", s.Release)
			}
			recvIs(t, ctx, r, 7)
			_, err := r.Recv(ctx)
			require.ErrorIs(t, err, mpmc.ErrClosed)
			r.Release()
		})
	}
}

// flagRing has Close() bool and IsClosed() bool, but its TryPush checks a
// flag and then pushes: the close race that mpmc.ClosableRing's contract
// rules out. pause, when set, runs between the check and the push.
type flagRing struct {
	ring.Ring[int]
	closed atomic.Bool
	pause  func()
}

func (r *flagRing) TryPush(v int) bool {
	if r.closed.Load() {
		return false
	}
	if r.pause != nil {
		r.pause()
	}
	return r.Ring.TryPush(v)
}

func (r *flagRing) Close() bool    { return !r.closed.Swap(true) }
func (r *flagRing) IsClosed() bool { return r.closed.Load() }

// A ring that merely has methods named Close and IsClosed is not trusted to
// close itself: the channel's counted guard makes Close wait for the push
// in flight, so no TrySend succeeds after Close has returned, and a
// receiver's ErrClosed stays final.
func TestARingWithCloseMethodsButNotClosableRingGetsTheGuard(t *testing.T) {
	fr := &flagRing{Ring: vyukov.New[int](2)}
	s, r := mpmc.BoundedOn[int](fr)
	var closeReturned atomic.Bool
	var sentAfterClose atomic.Bool
	inPush := make(chan struct{})
	fr.pause = func() {
		close(inPush)
		// Hold the push until the channel's Close has started, then give
		// it plenty of turns to finish: a correct Close cannot, it waits
		// for this push.
		for !s.IsClosed() {
			runtime.Gosched()
		}
		for range 1000 {
			if closeReturned.Load() {
				break
			}
			runtime.Gosched()
		}
		sentAfterClose.Store(closeReturned.Load())
	}
	sent := make(chan error, 1)
	go func() { sent <- s.TrySend(1) }()
	<-inPush
	within(t, "Close", func() {
		require.True(t, r.Close())
		closeReturned.Store(true)
	})
	require.NoError(t, <-sent)
	require.False(t, sentAfterClose.Load(), "a TrySend succeeded after Close had returned")
	v, err := r.TryRecv()
	require.NoError(t, err)
	require.Equal(t, 1, v)
	_, err = r.TryRecv()
	require.ErrorIs(t, err, mpmc.ErrClosed)
	s.Release()
	r.Release()
}

// A ring that implements mpmc.ClosableRing is used as it is: BoundedOn over
// a vyukov ring closes that ring.
func TestBoundedOnClosesAClosableRing(t *testing.T) {
	vr := vyukov.New[int](2)
	s, r := mpmc.BoundedOn[int](vr)
	require.True(t, s.Close())
	require.True(t, vr.IsClosed())
	require.False(t, vr.TryPush(1))
	s.Release()
	r.Release()
}
