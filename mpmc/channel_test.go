package mpmc_test

// Channel-wide behaviour: construction, counting, closing, and what the
// last Release does. Most tests are zruntime's single-thread behaviour
// tests (src/tests/mpmc.rs), named as there; they run over both kinds of
// channel, and over the ring backends that BoundedOn accepts.

import (
	"context"
	"runtime"
	"testing"
	"weak"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/mpmc"
	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/chanring"
	"github.com/shardedsink/shardedsink/ring/mutex"
	"github.com/shardedsink/shardedsink/ring/vyukov"
)

// backends are the bounded channels: Bounded, and BoundedOn each ring.
var backends = []struct {
	name string
	open func(capacity int) (*mpmc.Sender[int], *mpmc.Receiver[int])
}{
	{"Bounded", mpmc.Bounded[int]},
	{"BoundedOn vyukov", func(c int) (*mpmc.Sender[int], *mpmc.Receiver[int]) { return mpmc.BoundedOn(vyukov.Factory[int](c)) }},
	{"BoundedOn mutex", func(c int) (*mpmc.Sender[int], *mpmc.Receiver[int]) { return mpmc.BoundedOn(mutex.Factory[int](c)) }},
	{"BoundedOn chanring", func(c int) (*mpmc.Sender[int], *mpmc.Receiver[int]) { return mpmc.BoundedOn(chanring.Factory[int](c)) }},
	// A lock-free ring seen only as a ring.Ring: the channel's counted
	// guard does the closing and the ForceSend.
	{"BoundedOn plain vyukov", func(c int) (*mpmc.Sender[int], *mpmc.Receiver[int]) {
		return mpmc.BoundedOn[int](plainRing{vyukov.Factory[int](c)})
	}},
}

// plainRing hides every method of its ring beyond ring.Ring.
type plainRing struct{ ring.Ring[int] }

// allKinds are the backends plus an unbounded channel.
var allKinds = append(backends[:len(backends):len(backends)], struct {
	name string
	open func(capacity int) (*mpmc.Sender[int], *mpmc.Receiver[int])
}{"Unbounded", func(int) (*mpmc.Sender[int], *mpmc.Receiver[int]) { return mpmc.Unbounded[int]() }})

func TestBoundedPanicsOnACapacityBelowOne(t *testing.T) {
	require.PanicsWithValue(t, "mpmc: capacity must be at least 1, got 0", func() { mpmc.Bounded[int](0) })
	require.PanicsWithValue(t, "mpmc: capacity must be at least 1, got -3", func() { mpmc.Bounded[int](-3) })
	require.PanicsWithValue(t, "mpmc: BoundedOn needs a ring, got nil", func() { mpmc.BoundedOn[int](nil) })
}

func TestTrySendAndTryRecvMoveMessagesThrough(t *testing.T) {
	for _, k := range allKinds {
		t.Run(k.name, func(t *testing.T) {
			s, r := k.open(2)
			require.NoError(t, s.TrySend(1))
			require.NoError(t, s.TrySend(2))
			for want := 1; want <= 2; want++ {
				v, err := r.TryRecv()
				require.NoError(t, err)
				require.Equal(t, want, v)
			}
			_, err := r.TryRecv()
			require.ErrorIs(t, err, mpmc.ErrEmpty)
		})
	}
}

func TestSendAndRecvMoveMessagesThrough(t *testing.T) {
	for _, k := range allKinds {
		t.Run(k.name, func(t *testing.T) {
			ctx := context.Background()
			s, r := k.open(2)
			require.NoError(t, s.Send(ctx, 1))
			recvIs(t, ctx, r, 1)
			s.Release()
			_, err := r.Recv(ctx)
			require.ErrorIs(t, err, mpmc.ErrClosed)
		})
	}
}

// TestMessagesComeOutInTheOrderTheyWentIn keeps a channel of capacity 3
// near full through two senders and two receivers, wrapping the ring
// around 20 times.
func TestMessagesComeOutInTheOrderTheyWentIn(t *testing.T) {
	for _, k := range allKinds {
		t.Run(k.name, func(t *testing.T) {
			s1, r1 := k.open(3)
			s2, r2 := s1.Clone(), r1.Clone()
			next, want := 0, 0
			send := func(s *mpmc.Sender[int]) {
				require.NoError(t, s.TrySend(next))
				next++
			}
			recv := func(r *mpmc.Receiver[int]) {
				v, err := r.TryRecv()
				require.NoError(t, err)
				require.Equal(t, want, v)
				want++
			}
			send(s1)
			send(s2)
			for range 20 * 3 {
				send(s1)
				recv(r2)
				send(s2)
				recv(r1)
			}
			recv(r1)
			recv(r2)
			_, err := r1.TryRecv()
			require.ErrorIs(t, err, mpmc.ErrEmpty)
		})
	}
}

func TestTrySendOnAFullChannelHandsTheMessageBack(t *testing.T) {
	for _, k := range backends {
		t.Run(k.name, func(t *testing.T) {
			s, r := k.open(1)
			require.NoError(t, s.TrySend(1))
			require.ErrorIs(t, s.TrySend(2), mpmc.ErrFull)
			require.Equal(t, 1, s.Len(), "a failed send changes nothing")
			recvIs(t, context.Background(), r, 1)
			require.NoError(t, s.TrySend(2), "it goes in once there is room")
			recvIs(t, context.Background(), r, 2)
		})
	}
}

func TestABoundedChannelReportsItsLengthAndCapacity(t *testing.T) {
	for _, k := range backends {
		t.Run(k.name, func(t *testing.T) {
			s, r := k.open(3)
			for _, end := range []interface {
				Cap() int
				Len() int
				IsEmpty() bool
				IsFull() bool
			}{s, r} {
				require.Equal(t, 3, end.Cap())
				require.Equal(t, 0, end.Len())
				require.True(t, end.IsEmpty())
				require.False(t, end.IsFull())
			}
			for i := range 3 {
				require.NoError(t, s.TrySend(i))
				require.Equal(t, i+1, s.Len())
				require.Equal(t, i+1, r.Len())
			}
			require.True(t, s.IsFull())
			require.True(t, r.IsFull())
			require.ErrorIs(t, s.TrySend(9), mpmc.ErrFull)
			require.Equal(t, 3, r.Len())
		})
	}
}

func TestAnUnboundedChannelIsNeverFull(t *testing.T) {
	s, r := mpmc.Unbounded[int]()
	for i := range 1000 {
		require.NoError(t, s.TrySend(i))
		require.False(t, s.IsFull())
	}
	require.Equal(t, 1000, r.Len())
	require.Equal(t, 0, r.Cap())
}

func TestTheEndsAreCountedThroughClonesAndReleases(t *testing.T) {
	counts := func(s *mpmc.Sender[int], r *mpmc.Receiver[int]) [4]int {
		return [4]int{s.SenderCount(), s.ReceiverCount(), r.SenderCount(), r.ReceiverCount()}
	}
	s, r := mpmc.Bounded[int](1)
	require.Equal(t, [4]int{1, 1, 1, 1}, counts(s, r))
	s2 := s.Clone()
	r2 := r.Clone()
	r3 := r2.Clone()
	require.Equal(t, [4]int{2, 3, 2, 3}, counts(s, r))
	r3.Release()
	s2.Release()
	require.Equal(t, [4]int{1, 2, 1, 2}, counts(s, r))
	require.False(t, r.IsClosed())

	ws := s.Downgrade() // weak ends are not counted
	require.Equal(t, [4]int{1, 2, 1, 2}, counts(s, r))

	s.Release()
	require.Equal(t, 0, r.SenderCount())
	require.Equal(t, 2, r.ReceiverCount(), "r and r2 live on")
	require.True(t, r.IsClosed(), "the last sender's Release closes the channel")
	_, ok := ws.Upgrade()
	require.False(t, ok)
	r2.Release()
	r.Release()
}

func TestClosingReturnsTrueOnceFromEitherSide(t *testing.T) {
	for _, k := range allKinds {
		for _, first := range []string{"sender", "receiver"} {
			t.Run(k.name+"/first "+first, func(t *testing.T) {
				s, r := k.open(1)
				select {
				case <-s.Closed():
					t.Fatal("Closed fired on an open channel")
				default:
				}
				if first == "sender" {
					require.True(t, s.Close())
				} else {
					require.True(t, r.Close())
				}
				require.False(t, s.Close())
				require.False(t, r.Close())
				require.True(t, s.IsClosed())
				require.True(t, r.IsClosed())
				require.Equal(t, 1, s.SenderCount(), "closing releases no end")
				require.Equal(t, 1, r.ReceiverCount())
				<-s.Closed()
				<-r.Closed()
			})
		}
	}
}

// TestAClosedChannelRefusesSendsAndHandsTheMessageBack: with room, full,
// or unbounded, a send on a closed channel reports ErrClosed, never
// ErrFull, and changes nothing.
func TestAClosedChannelRefusesSendsAndHandsTheMessageBack(t *testing.T) {
	for _, k := range allKinds {
		for _, full := range []bool{false, true} {
			if full && k.name == "Unbounded" {
				continue
			}
			name := k.name + "/with room"
			if full {
				name = k.name + "/full"
			}
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				s, r := k.open(2)
				require.NoError(t, s.TrySend(1))
				if full {
					require.NoError(t, s.TrySend(2))
				}
				before := r.Len()
				require.True(t, s.Close())
				require.ErrorIs(t, s.TrySend(7), mpmc.ErrClosed)
				require.ErrorIs(t, s.Send(ctx, 7), mpmc.ErrClosed)
				old, displaced, err := s.ForceSend(7)
				require.ErrorIs(t, err, mpmc.ErrClosed)
				require.False(t, displaced)
				require.Zero(t, old)
				require.Equal(t, before, r.Len())
			})
		}
	}
}

func TestAClosedChannelHandsOutTheValuesLeftAndThenErrClosed(t *testing.T) {
	for _, k := range allKinds {
		t.Run(k.name, func(t *testing.T) {
			ctx := context.Background()
			s, r := k.open(3)
			for i := range 3 {
				require.NoError(t, s.TrySend(i))
			}
			require.True(t, r.Close())
			for i := range 3 {
				recvIs(t, ctx, r, i)
			}
			for range 2 { // and stays so
				_, err := r.Recv(ctx)
				require.ErrorIs(t, err, mpmc.ErrClosed)
				_, err = r.TryRecv()
				require.ErrorIs(t, err, mpmc.ErrClosed)
			}
		})
	}
}

func TestAClosedChannelEndsAllAfterTheValuesLeft(t *testing.T) {
	ctx := context.Background()
	s, r := mpmc.Unbounded[int]()
	for i := range 3 {
		require.NoError(t, s.TrySend(i))
	}
	s.Close()
	var got []int
	for v := range r.All(ctx) {
		got = append(got, v)
	}
	require.Equal(t, []int{0, 1, 2}, got)
	for range r.All(ctx) {
		t.Fatal("a second All on a closed, empty channel yields nothing")
	}
}

func TestReleasingTheLastReceiverClosesTheChannel(t *testing.T) {
	for _, k := range allKinds {
		t.Run(k.name, func(t *testing.T) {
			s, r := k.open(1)
			r.Release()
			require.True(t, s.IsClosed())
			require.ErrorIs(t, s.TrySend(1), mpmc.ErrClosed)
			require.Equal(t, 0, s.ReceiverCount())
		})
	}
}

// TestReleasingTheLastReceiverDropsTheValuesLeft: the values left are
// unreachable at once (the channel clears its references), whether the
// channel was closed before or not; a Release that is not the last drops
// nothing.
func TestReleasingTheLastReceiverDropsTheValuesLeft(t *testing.T) {
	kinds := map[string]func() (*mpmc.Sender[*[64]byte], *mpmc.Receiver[*[64]byte]){
		"Bounded":   func() (*mpmc.Sender[*[64]byte], *mpmc.Receiver[*[64]byte]) { return mpmc.Bounded[*[64]byte](8) },
		"Unbounded": mpmc.Unbounded[*[64]byte],
		"BoundedOn mutex": func() (*mpmc.Sender[*[64]byte], *mpmc.Receiver[*[64]byte]) {
			return mpmc.BoundedOn(mutex.Factory[*[64]byte](8))
		},
	}
	for name, open := range kinds {
		for _, closedFirst := range []bool{false, true} {
			sub := name + "/open"
			if closedFirst {
				sub = name + "/closed first"
			}
			t.Run(sub, func(t *testing.T) {
				s, r := open()
				var refs []weak.Pointer[[64]byte]
				for range 5 {
					p := new([64]byte)
					refs = append(refs, weak.Make(p))
					require.NoError(t, s.TrySend(p))
				}
				if closedFirst {
					s.Close()
				}
				r2 := r.Clone()
				r.Release() // not the last: drops nothing
				require.Equal(t, 5, s.Len())

				r2.Release()
				require.Equal(t, 0, s.Len())
				runtime.GC()
				runtime.GC()
				for i, ref := range refs {
					require.Nil(t, ref.Value(), "value %d is still reachable", i)
				}
				runtime.KeepAlive(s)
			})
		}
	}
}

// A value that holds a Sender of its own channel (a reference cycle) is
// freed with the last receiver's Release, and finds the channel closed.
func TestAValueHoldingASenderOfItsOwnChannelIsFreedWithTheLastReceiver(t *testing.T) {
	type msg struct{ reply *mpmc.Sender[*msg] }
	s, r := mpmc.Unbounded[*msg]()
	m := &msg{reply: s.Clone()}
	ref := weak.Make(m)
	require.NoError(t, s.TrySend(m))
	m = nil
	r.Release()
	require.True(t, s.IsClosed())
	require.Equal(t, 0, s.ReceiverCount())
	runtime.GC()
	runtime.GC()
	require.Nil(t, ref.Value())
}

func TestMisuseOfAReleasedEndPanics(t *testing.T) {
	ctx := context.Background()
	s, r := mpmc.Bounded[int](1)
	s2, r2 := s.Clone(), r.Clone()
	s2.Release()
	r2.Release()
	require.PanicsWithValue(t, "mpmc: Sender released twice", s2.Release)
	require.PanicsWithValue(t, "mpmc: Receiver released twice", r2.Release)
	for name, f := range map[string]func(){
		"Send":      func() { _ = s2.Send(ctx, 1) },
		"TrySend":   func() { _ = s2.TrySend(1) },
		"ForceSend": func() { _, _, _ = s2.ForceSend(1) },
		"Clone":     func() { s2.Clone() },
		"Downgrade": func() { s2.Downgrade() },
		"Len":       func() { s2.Len() },
		"Close":     func() { s2.Close() },
	} {
		require.PanicsWithValue(t, "mpmc: Sender used after Release", f, name)
	}
	for name, f := range map[string]func(){
		"Recv":     func() { _, _ = r2.Recv(ctx) },
		"TryRecv":  func() { _, _ = r2.TryRecv() },
		"RecvMany": func() { _, _ = r2.RecvMany(ctx, make([]int, 1)) },
		"All":      func() { r2.All(ctx) },
		"Clone":    func() { r2.Clone() },
		"IsClosed": func() { r2.IsClosed() },
	} {
		require.PanicsWithValue(t, "mpmc: Receiver used after Release", f, name)
	}
	require.False(t, s.IsClosed(), "the misuse changed nothing")
}
