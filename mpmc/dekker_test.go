package mpmc_test

// The notifier's half of the Dekker pair (waiters.go), staged: a Send whose
// push lands after a receiver queued and found the channel empty must see
// that receiver when it loads the waiting count after its push, and wake
// it; a Recv whose pop lands after a sender queued and found no room must
// see that sender after its pop, and push its value for it. The stress
// tests meet this interleaving only by chance, in a window of a few
// nanoseconds per round; here a ring that holds the operation at the gate
// of its push or pop makes it happen every time. (Checked against a Send
// that loads the receivers' count before its push instead of after, and a
// Recv that loads the senders' count before its pop: each test then fails,
// the other end asleep beside a value or a free slot.)

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/mpmc"
	"github.com/shardedsink/shardedsink/ring/vyukov"
)

// gateRing is a vyukov ring whose first TryPush (or first TryPop) calls
// gate before it goes on, and which counts the calls of each.
type gateRing struct {
	*vyukov.Ring[int]
	pushGate, popGate func()
	pushOnce, popOnce sync.Once
	pushes, pops      atomic.Int64
}

func (g *gateRing) TryPush(v int) bool {
	if g.pushGate != nil {
		g.pushOnce.Do(g.pushGate)
	}
	g.pushes.Add(1)
	return g.Ring.TryPush(v)
}

func (g *gateRing) TryPop() (int, bool) {
	if g.popGate != nil {
		g.popOnce.Do(g.popGate)
	}
	g.pops.Add(1)
	return g.Ring.TryPop()
}

// received is what a Recv returned.
type received struct {
	v   int
	err error
}

// recvAsync calls r.Recv(ctx) in a goroutine and returns where its result
// comes.
func recvAsync(ctx context.Context, r *mpmc.Receiver[int]) <-chan received {
	got := make(chan received, 1)
	go func() {
		v, err := r.Recv(ctx)
		got <- received{v, err}
	}()
	return got
}

// await polls cond until it holds, and fails the test after 10 s.
func await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(50 * time.Microsecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not within 10s", what)
		}
	}
}

func TestASendWhosePushLandsAfterAReceiverQueuedWakesIt(t *testing.T) {
	reached, release := make(gate), make(gate)
	g := &gateRing{Ring: vyukov.New[int](1), pushGate: func() { reached.open(); release.wait() }}
	s, r := mpmc.BoundedOn[int](g)
	defer s.Release()
	defer r.Release()
	ctx := deadline(t)

	sent := make(chan error, 1)
	go func() { sent <- s.Send(ctx, 7) }()
	<-reached // the Send found no receiver waiting and is about to push
	got := recvAsync(ctx, r)
	// Two pops: the Recv's try, and its retry once queued. It is parked.
	await(t, "the receiver queued and retried", func() bool { return g.pops.Load() == 2 })
	require.Equal(t, 1, mpmc.WaitingReceivers(r))
	release.open()

	require.NoError(t, <-sent)
	select {
	case res := <-got:
		require.NoError(t, res.err)
		require.Equal(t, 7, res.v)
	case <-time.After(5 * time.Second):
		t.Fatal("the receiver sleeps beside the value that the Send pushed (a lost wake-up)")
	}
}

func TestARecvWhosePopLandsAfterASenderQueuedPushesItsValue(t *testing.T) {
	reached, release := make(gate), make(gate)
	g := &gateRing{Ring: vyukov.New[int](1), popGate: func() { reached.open(); release.wait() }}
	s, r := mpmc.BoundedOn[int](g)
	defer s.Release()
	defer r.Release()
	ctx := deadline(t)
	require.NoError(t, s.TrySend(1)) // full

	got := recvAsync(ctx, r)
	<-reached // the Recv is about to pop
	sent := make(chan error, 1)
	go func() { sent <- s.Send(ctx, 2) }()
	// Three pushes: the TrySend's, the Send's try and its retry once
	// queued. The sender is parked.
	await(t, "the sender queued and retried", func() bool { return g.pushes.Load() == 3 })
	require.Equal(t, 1, mpmc.WaitingSenders(s))
	release.open()

	res := <-got
	require.NoError(t, res.err)
	require.Equal(t, 1, res.v)
	select {
	case err := <-sent:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("the sender sleeps beside the room that the Recv made (a lost wake-up)")
	}
	v, err := r.TryRecv()
	require.NoError(t, err)
	require.Equal(t, 2, v)
}
