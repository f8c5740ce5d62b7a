package mpmc_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/mpmc"
)

// stamped is a message of the locked-thread stress test: three words, each
// derived from the sender and the sequence number, so that a receiver that
// reads a slot before its value is published (a reordering of the value's
// writes against the slot's publish, or of the receiver's reads against
// its load of the publish) sees a stale or half-written message and
// reports it, rather than merely counting one value too many or too few.
type stamped struct {
	sender, seq, check uint64
}

func stamp(sender, seq uint64) stamped {
	return stamped{sender: sender, seq: seq, check: mix(sender<<40 ^ seq)}
}

// mix is splitmix64's finaliser: every bit of x affects every bit of the
// result.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// TestLockedThreadsReceiveEveryValueIntactAndInOrder runs senders and
// receivers each on its own OS thread (runtime.LockOSThread), so that they
// run truly in parallel on the machine's cores rather than being
// interleaved by one P, for long enough that a missing release or acquire
// on the publish of a slot would show on amd64: every message is checked
// on receipt (its check word, and its sequence number against the last
// one received from that sender, which must be lower: per-sender order),
// and at the end every sequence number of every sender must have been
// received exactly once. Half of the receivers poll with TryRecv and half
// wait with Recv, and half of the senders send with TrySend, so both the
// lock-free paths and the wake-ups are exercised.
func TestLockedThreadsReceiveEveryValueIntactAndInOrder(t *testing.T) {
	run, most := time.Second, uint64(200_000)
	if testing.Short() {
		run, most = 200*time.Millisecond, 20_000
	}
	for _, tc := range []struct {
		name               string
		capacity           int // 0: unbounded
		senders, receivers int
		spin               bool // every end polls (TrySend, TryRecv)
	}{
		// One sender and one receiver that only poll, each with a core of
		// its own where the machine has two: the receiver takes each value
		// as soon as it is published, which is where a reordering shows.
		{"bounded1/1x1-spin", 1, 1, 1, true},
		{"bounded16/1x1-spin", 16, 1, 1, true},
		{"unbounded/1x1-spin", 0, 1, 1, true},
		{"bounded1/2x2", 1, 2, 2, false},
		{"bounded16/4x4", 16, 4, 4, false},
		{"bounded1024/4x4", 1024, 4, 4, false},
		{"unbounded/4x4", 0, 4, 4, false},
		{"unbounded/4x4-spin", 0, 4, 4, true},
		{"unbounded/1x4", 0, 1, 4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tx *mpmc.Sender[stamped]
			var rx *mpmc.Receiver[stamped]
			if tc.capacity == 0 {
				tx, rx = mpmc.Unbounded[stamped]()
			} else {
				tx, rx = mpmc.Bounded[stamped](tc.capacity)
			}
			lockedThreadsStress(t, tx, rx, tc.senders, tc.receivers, tc.spin, run, most)
		})
	}
}

// lockedThreadsStress runs the test on one channel: each sender sends for
// run, or until it has sent most messages (an unbounded channel would
// otherwise pile up what the receivers cannot keep up with). With spin,
// every end polls; otherwise even-numbered ends wait (Send, Recv) and odd
// ones poll. A polling end yields its P (runtime.Gosched) after each failed
// try when there are more threads than Ps, and after spinTries failed tries
// in a row otherwise: a thread that only spins would hold its P until it
// is preempted, and on a loaded machine the other end's thread may not be
// running at all.
// spinTries is how many failed tries in a row a polling end of the
// locked-thread stress test makes before it yields, when each thread can
// have a P of its own.
const spinTries = 1000

func lockedThreadsStress(t *testing.T, tx *mpmc.Sender[stamped], rx *mpmc.Receiver[stamped], senders, receivers int, spin bool, run time.Duration, most uint64) {
	tries := spinTries
	if senders+receivers > runtime.GOMAXPROCS(0) {
		tries = 1
	}
	ctx := deadline(t)
	var stop atomic.Bool
	sent := make([]uint64, senders)
	// got[r][s] lists what receiver r received from sender s, in order.
	got := make([][][]uint64, receivers)
	errs := make(chan error, receivers+senders)
	var wg sync.WaitGroup
	for i := range senders {
		s := tx.Clone()
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			defer s.Release()
			var seq uint64
			for seq < most && !stop.Load() {
				m := stamp(uint64(i), seq)
				if !spin && i%2 == 0 {
					if err := s.Send(ctx, m); err != nil {
						errs <- fmt.Errorf("sender %d: Send of %d: %w", i, seq, err)
						return
					}
				} else {
					for failed := 1; ; failed++ {
						err := s.TrySend(m)
						if err == nil {
							break
						}
						if !errors.Is(err, mpmc.ErrFull) || ctx.Err() != nil {
							errs <- fmt.Errorf("sender %d: TrySend of %d: %w", i, seq, err)
							return
						}
						if failed%tries == 0 {
							runtime.Gosched()
						}
					}
				}
				seq++
			}
			sent[i] = seq
		})
	}
	for j := range receivers {
		r := rx.Clone()
		got[j] = make([][]uint64, senders)
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			defer r.Release()
			mine := got[j]
			check := func(m stamped) error {
				if m.sender >= uint64(senders) {
					return fmt.Errorf("receiver %d: message from sender %d, which does not exist: %+v", j, m.sender, m)
				}
				if want := stamp(m.sender, m.seq); m != want {
					return fmt.Errorf("receiver %d: torn or stale message %+v, want %+v", j, m, want)
				}
				seqs := mine[m.sender]
				if n := len(seqs); n > 0 && seqs[n-1] >= m.seq {
					return fmt.Errorf("receiver %d: from sender %d, %d after %d: out of order", j, m.sender, m.seq, seqs[n-1])
				}
				mine[m.sender] = append(seqs, m.seq)
				return nil
			}
			failed := 0
			for {
				var m stamped
				var err error
				if !spin && j%2 == 0 {
					m, err = r.Recv(ctx)
				} else {
					m, err = r.TryRecv()
					if errors.Is(err, mpmc.ErrEmpty) {
						if ctx.Err() != nil {
							errs <- fmt.Errorf("receiver %d: %w", j, ctx.Err())
							return
						}
						if failed++; failed%tries == 0 {
							runtime.Gosched()
						}
						continue
					}
				}
				failed = 0
				if errors.Is(err, mpmc.ErrClosed) {
					return
				}
				if err != nil {
					errs <- fmt.Errorf("receiver %d: %w", j, err)
					return
				}
				if err := check(m); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	// The originals go, so that the clones' Releases close the channel
	// once the senders are done, and the receivers drain it.
	tx.Release()
	rx.Release()
	// Real time, not a synctest bubble: the threads must run in parallel.
	time.AfterFunc(run, func() { stop.Store(true) })
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	var total uint64
	for i := range senders {
		seen := make([]bool, sent[i])
		n := 0
		for j := range receivers {
			for _, q := range got[j][i] {
				require.Less(t, q, sent[i], "sender %d sent %d messages", i, sent[i])
				require.False(t, seen[q], "sender %d's message %d received twice", i, q)
				seen[q] = true
				n++
			}
		}
		require.Equal(t, int(sent[i]), n, "sender %d: messages received", i)
		total += sent[i]
	}
	t.Logf("%d messages", total)
}

// TestLockedThreadsPingPongLosesNoWakeUp plays ping-pong between two locked
// threads over two channels: each Recv finds its channel empty and goes to
// wait just as the other thread sends, rounds times, so a store-load
// reordering in the waiter's Dekker pair (its registration passing its
// retry, or the sender's check for waiters passing its push) leaves both
// threads asleep, and the test's watchdog (stallDeadline) fails it. Each message is
// checked as in the test above. This test meets the reordering only by
// chance, where the hardware makes it: a Send that loads the receivers'
// waiting count before its push instead of after does not make it fail on
// a 2-core AMD EPYC VM in 100,000 rounds, because the window is a few
// nanoseconds per round. dekker_test.go stages that interleaving every
// time, and fails for both halves of the pair.
func TestLockedThreadsPingPongLosesNoWakeUp(t *testing.T) {
	rounds := uint64(100_000)
	if testing.Short() {
		rounds = 10_000
	}
	for _, capacity := range []int{1, 0} {
		t.Run(fmt.Sprintf("capacity=%d", capacity), func(t *testing.T) {
			mk := func() (*mpmc.Sender[stamped], *mpmc.Receiver[stamped]) {
				if capacity == 0 {
					return mpmc.Unbounded[stamped]()
				}
				return mpmc.Bounded[stamped](capacity)
			}
			ctx, progress := stallDeadline(t)
			pingS, pingR := mk()
			pongS, pongR := mk()
			defer pingR.Release()
			defer pongR.Release()
			player := func(id uint64, s *mpmc.Sender[stamped], r *mpmc.Receiver[stamped], serve bool) error {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				defer s.Release()
				for i := range rounds {
					if serve {
						if err := s.Send(ctx, stamp(id, i)); err != nil {
							return fmt.Errorf("player %d, round %d: Send: %w", id, i, err)
						}
					}
					m, err := r.Recv(ctx)
					if err != nil {
						return fmt.Errorf("player %d, round %d: Recv: %w: %w", id, i, err, context.Cause(ctx))
					}
					progress()
					if want := stamp(1-id, i); m != want {
						return fmt.Errorf("player %d, round %d: got %+v, want %+v", id, i, m, want)
					}
					if !serve {
						// Answer after a pseudo-random pause of up to about
						// a microsecond, so that the answer lands at every
						// point of the other player's way to sleep: its
						// failed pop, its registration, its retry.
						spinFor(mix(i) % 1024)
						if err := s.Send(ctx, stamp(id, i)); err != nil {
							return fmt.Errorf("player %d, round %d: Send: %w", id, i, err)
						}
					}
				}
				return nil
			}
			var errA, errB error
			parallel(func() { errA = player(0, pingS, pongR, true) },
				func() { errB = player(1, pongS, pingR, false) })
			require.NoError(t, errA)
			require.NoError(t, errB)
		})
	}
}

// spinSink keeps spinFor's loop from being optimised away.
var spinSink atomic.Uint64

// spinFor spins for about n nanoseconds' worth of loop iterations.
func spinFor(n uint64) {
	x := n
	for range n {
		x = x*6364136223846793005 + 1
	}
	spinSink.Store(x)
}
