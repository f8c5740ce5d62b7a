package mpmc_test

import (
	"context"
	"errors"
	"flag"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/mpmc"
	"github.com/shardedsink/shardedsink/ring/mutex"
)

// signalled reports whether ready holds a token, taking it.
func signalled(ready <-chan struct{}) bool {
	select {
	case <-ready:
		return true
	default:
		return false
	}
}

// readyKinds are the channels readiness is tested on: each storage path
// (a vyukov ring, the unbounded queue, a guarded plain ring).
var readyKinds = []struct {
	name string
	open func() (*mpmc.Sender[uint64], *mpmc.Receiver[uint64])
}{
	{"Bounded", func() (*mpmc.Sender[uint64], *mpmc.Receiver[uint64]) { return mpmc.Bounded[uint64](8) }},
	{"Unbounded", mpmc.Unbounded[uint64]},
	{"BoundedOn_mutex", func() (*mpmc.Sender[uint64], *mpmc.Receiver[uint64]) {
		return mpmc.BoundedOn[uint64](mutex.New[uint64](8))
	}},
}

func TestReady(t *testing.T) {
	ctx := context.Background()
	for _, k := range readyKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Run("is not signalled on an empty open channel", func(t *testing.T) {
				_, r := k.open()
				require.False(t, signalled(r.Ready()))
			})
			t.Run("returns the same channel to every call and every clone", func(t *testing.T) {
				_, r := k.open()
				r2 := r.Clone()
				require.Equal(t, r.Ready(), r.Ready())
				require.Equal(t, r.Ready(), r2.Ready())
			})
			t.Run("signals once for sends that come before the signal is taken", func(t *testing.T) {
				s, r := k.open()
				ready := r.Ready()
				require.NoError(t, s.Send(ctx, 1))
				require.NoError(t, s.TrySend(2))
				_, _, err := s.ForceSend(3)
				require.NoError(t, err)
				require.True(t, signalled(ready))
				require.False(t, signalled(ready), "three sends coalesce into one signal")
			})
			t.Run("is signalled at once for values sent before the first call", func(t *testing.T) {
				s, r := k.open()
				require.NoError(t, s.TrySend(1))
				require.True(t, signalled(r.Ready()))
			})
			t.Run("is re-armed by a receive that leaves values, and only by one", func(t *testing.T) {
				s, r := k.open()
				ready := r.Ready()
				for i := range uint64(3) {
					require.NoError(t, s.TrySend(i))
				}
				require.True(t, signalled(ready))
				for i := range uint64(3) {
					v, err := r.TryRecv()
					require.NoError(t, err)
					require.Equal(t, i, v)
					require.Equal(t, i < 2, signalled(ready), "after receive %d of 3", i)
				}
				require.False(t, signalled(ready))
			})
			t.Run("is re-armed by Recv, RecvMany and All that leave values", func(t *testing.T) {
				s, r := k.open()
				ready := r.Ready()
				for i := range uint64(5) {
					require.NoError(t, s.TrySend(i))
				}
				require.True(t, signalled(ready))
				_, err := r.Recv(ctx)
				require.NoError(t, err)
				require.True(t, signalled(ready), "Recv left 4")
				var dst [2]uint64
				n, err := r.RecvMany(ctx, dst[:])
				require.NoError(t, err)
				require.Equal(t, 2, n)
				require.True(t, signalled(ready), "RecvMany left 2")
				for range r.All(ctx) {
					break
				}
				require.True(t, signalled(ready), "All left 1")
				n, err = r.RecvMany(ctx, dst[:])
				require.NoError(t, err)
				require.Equal(t, 1, n)
				require.False(t, signalled(ready), "RecvMany took the last")
			})
			t.Run("is signalled by a send that a receive completes for a parked sender", func(t *testing.T) {
				s, r := k.open()
				if s.Cap() == 0 {
					t.Skip("an unbounded channel has no parked senders")
				}
				ready := r.Ready()
				for i := range s.Cap() {
					require.NoError(t, s.TrySend(uint64(i)))
				}
				done := make(chan error)
				go func() { done <- s.Send(deadline(t), 99) }()
				for mpmc.WaitingSenders(s) == 0 {
					time.Sleep(time.Millisecond)
				}
				require.True(t, signalled(ready))
				for range s.Cap() {
					_, err := r.TryRecv() // the first pushes 99 for the sender
					require.NoError(t, err)
				}
				require.NoError(t, <-done)
				require.True(t, signalled(ready), "99 is left")
				v, err := r.TryRecv()
				require.NoError(t, err)
				require.Equal(t, uint64(99), v)
			})
			t.Run("leaves the count of waiting receivers and senders alone", func(t *testing.T) {
				s, r := k.open()
				_ = r.Ready()
				require.Zero(t, mpmc.WaitingReceivers(r))
				require.Zero(t, mpmc.WaitingSenders(s))
				got := make(chan uint64)
				go func() {
					v, _ := r.Recv(deadline(t))
					got <- v
				}()
				for mpmc.WaitingReceivers(r) == 0 {
					time.Sleep(time.Millisecond)
				}
				require.Equal(t, 1, mpmc.WaitingReceivers(r))
				require.NoError(t, s.TrySend(7)) // handed to the waiting Recv
				require.Equal(t, uint64(7), <-got)
				require.Zero(t, mpmc.WaitingReceivers(r))
			})
		})
	}
}

func TestReadyAfterClose(t *testing.T) {
	for _, k := range readyKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Run("Close signals a channel that nobody sent to", func(t *testing.T) {
				s, r := k.open()
				ready := r.Ready()
				require.True(t, s.Close())
				require.True(t, signalled(ready))
				_, err := r.TryRecv()
				require.ErrorIs(t, err, mpmc.ErrClosed)
			})
			t.Run("a first Ready after Close is signalled", func(t *testing.T) {
				s, r := k.open()
				s.Close()
				require.True(t, signalled(r.Ready()))
			})
			t.Run("values left are received first, then every ErrClosed signals again", func(t *testing.T) {
				s, r := k.open()
				ready := r.Ready()
				require.NoError(t, s.TrySend(1))
				require.NoError(t, s.TrySend(2))
				s.Release() // the last sender: closes
				require.True(t, signalled(ready))
				for want := uint64(1); want <= 2; want++ {
					v, err := r.TryRecv()
					require.NoError(t, err)
					require.Equal(t, want, v)
				}
				for range 3 { // three workers in turn, each told by its ErrClosed's signal
					require.True(t, signalled(ready))
					_, err := r.TryRecv()
					require.ErrorIs(t, err, mpmc.ErrClosed)
				}
			})
			t.Run("wakes every worker selecting on it", func(t *testing.T) {
				s, r := k.open()
				const workers = 8
				var wg sync.WaitGroup
				var started sync.WaitGroup
				started.Add(workers)
				for range workers {
					rx := r.Clone()
					wg.Go(func() {
						defer rx.Release()
						ctx := deadline(t)
						started.Done()
						for {
							select {
							case <-rx.Ready():
							case <-ctx.Done():
								t.Error("a worker selecting on Ready was not woken by Close")
								return
							}
							if _, err := rx.TryRecv(); errors.Is(err, mpmc.ErrClosed) {
								return
							}
						}
					})
				}
				started.Wait()
				s.Close()
				wg.Wait()
				r.Release()
			})
		})
	}
}

func TestReadyAndRelease(t *testing.T) {
	for _, k := range readyKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Run("a released receiver that took the signal passes it on", func(t *testing.T) {
				s, r := k.open()
				r2 := r.Clone()
				ready := r2.Ready()
				require.NoError(t, s.TrySend(1))
				require.True(t, signalled(ready)) // r2's goroutine takes it...
				r2.Release()                      // ...and leaves without receiving
				require.True(t, signalled(r.Ready()), "the value would wait unsignalled")
				v, err := r.TryRecv()
				require.NoError(t, err)
				require.Equal(t, uint64(1), v)
			})
			t.Run("the readiness channel of a released receiver goes on working for its clones", func(t *testing.T) {
				s, r := k.open()
				r2 := r.Clone()
				ready := r2.Ready()
				r2.Release()
				require.False(t, signalled(ready), "nothing is left: Release does not signal")
				require.NoError(t, s.TrySend(1))
				require.True(t, signalled(ready))
				require.Equal(t, ready, r.Ready())
			})
			t.Run("Ready on a released receiver panics", func(t *testing.T) {
				_, r := k.open()
				r2 := r.Clone()
				r2.Release()
				require.PanicsWithValue(t, "mpmc: Receiver used after Release", func() { r2.Ready() })
			})
			t.Run("the last Release closes: the held channel is signalled", func(t *testing.T) {
				s, r := k.open()
				ready := r.Ready()
				require.NoError(t, s.TrySend(1))
				require.True(t, signalled(ready))
				r.Release() // drops the value, closes
				require.True(t, signalled(ready))
				require.ErrorIs(t, s.TrySend(2), mpmc.ErrClosed)
			})
		})
	}
}

// TestNoLostWakeupWithReadiness: many workers select on the readiness of
// one channel and on a ticker, while senders send in bursts with pauses
// (so that the workers go to sleep between them), some waiting for room on
// a small bounded channel. The workers take values only after a signal,
// never on a tick: a wake-up lost leaves a value in the channel that no
// worker comes for, and the test fails at the deadline. Every value must
// arrive exactly once. In the "mixed" runs half the workers drain the
// channel after each signal and half take one value; in the
// "one-per-signal" runs every worker takes one value a signal, so that
// only the re-arm of a receive that leaves values gets the rest taken.
func TestNoLostWakeupWithReadiness(t *testing.T) {
	const senders, receivers = 4, 8
	perSender := scaled(20000)
	for _, k := range readyKinds {
		for _, onePerSignal := range []bool{false, true} {
			name := k.name + "/mixed"
			if onePerSignal {
				name = k.name + "/one-per-signal"
			}
			t.Run(name, func(t *testing.T) {
				s, r := k.open()
				ctx := deadline(t)
				seen := make([]atomic.Uint32, senders*perSender)
				var received, ticks atomic.Int64
				var wg sync.WaitGroup
				for w := range receivers {
					rx := r.Clone()
					wg.Go(func() {
						defer rx.Release()
						ticker := time.NewTicker(time.Millisecond)
						defer ticker.Stop()
						for {
							select {
							case <-rx.Ready():
							case <-ticker.C:
								ticks.Add(1)
								continue // never receive on a tick: it would hide a lost wake-up
							case <-ctx.Done():
								t.Errorf("worker %d: deadline with %d of %d received: a lost wake-up", w, received.Load(), len(seen))
								return
							}
							// One value a signal, or (half the workers, mixed) drain.
							for {
								v, err := rx.TryRecv()
								if errors.Is(err, mpmc.ErrEmpty) {
									break
								}
								if err != nil {
									return // closed and empty
								}
								if seen[v].Add(1) != 1 {
									t.Errorf("value %d received twice", v)
								}
								received.Add(1)
								if onePerSignal || w%2 == 0 {
									break
								}
							}
						}
					})
				}
				r.Release()
				for i := range senders {
					tx := s.Clone()
					wg.Go(func() {
						defer tx.Release()
						for j := range perSender {
							v := uint64(i*perSender + j)
							var err error
							if j%2 == 0 {
								err = tx.Send(ctx, v)
							} else {
								for err = tx.TrySend(v); errors.Is(err, mpmc.ErrFull); err = tx.TrySend(v) {
									time.Sleep(time.Microsecond)
								}
							}
							if err != nil {
								t.Errorf("send %d: %v", v, err)
								return
							}
							if j%64 == 63 {
								time.Sleep(50 * time.Microsecond) // let the workers fall asleep
							}
						}
					})
				}
				s.Release()
				wg.Wait()
				require.Equal(t, int64(len(seen)), received.Load())
				t.Logf("%d values, %d ticks", received.Load(), ticks.Load())
			})
		}
	}
}

var selectValues = flag.Int("mpmc.select-values", 0,
	"values through the selecting worker of TestASelectingWorkerLosesNothing (0: 10^7, 10^6 under -short)")

// TestASelectingWorkerLosesNothing sends 10^7 values (10^6 under -short)
// through one worker that selects on the readiness of two channels, one
// bounded and one unbounded, and on a ticker: each value arrives exactly
// once, and each sender's values in order. Under -race on the 2-core VM
// it took 35 s (2.4 s for 10^6; load average 3 to 4), and 3 s
// without.
func TestASelectingWorkerLosesNothing(t *testing.T) {
	total := *selectValues
	if total == 0 {
		total = 10_000_000
		if testing.Short() {
			total = 1_000_000
		}
	}
	const sendersPerChannel = 2
	per := total / (2 * sendersPerChannel)
	// A lost wake-up stops the worker for good; a slow machine only slows
	// it, so the deadline grows with the count.
	ctx, cancel := context.WithTimeout(context.Background(), lostWakeup+time.Duration(total)*20*time.Microsecond)
	defer cancel()
	bs, br := mpmc.Bounded[uint64](1024)
	us, ur := mpmc.Unbounded[uint64]()
	var wg sync.WaitGroup
	for c, s := range []*mpmc.Sender[uint64]{bs, us} {
		for i := range sendersPerChannel {
			tx := s.Clone()
			id := uint64(c*sendersPerChannel + i)
			wg.Go(func() {
				defer tx.Release()
				for j := range uint64(per) {
					if err := tx.Send(ctx, id<<40|j); err != nil {
						t.Errorf("sender %d: %v", id, err)
						return
					}
				}
			})
		}
		s.Release()
	}

	next := make([]uint64, 2*sendersPerChannel) // the next value expected of each sender
	got, ticks := 0, 0
	ticker := time.NewTicker(10 * time.Millisecond)
	defer ticker.Stop()
	take := func(v uint64) {
		id, j := v>>40, v&(1<<40-1)
		if j != next[id] {
			t.Fatalf("sender %d: got value %d, want %d (lost, duplicated or out of order)", id, j, next[id])
		}
		next[id]++
		got++
	}
	var dst [64]uint64
	open := 2
	brReady, urReady := br.Ready(), ur.Ready()
	for open > 0 {
		select {
		case <-brReady:
			// TryRecv first, then RecvMany for what is left: this worker
			// is the channel's only receiver, so with Len above 0 RecvMany
			// finds a value at once and never waits.
			v, err := br.TryRecv()
			if errors.Is(err, mpmc.ErrClosed) {
				open--
				brReady = nil
				continue
			}
			if err == nil {
				take(v)
				if br.Len() == 0 {
					continue
				}
				if n, err := br.RecvMany(ctx, dst[:]); err == nil {
					for _, v := range dst[:n] {
						take(v)
					}
				}
			}
		case <-urReady:
			v, err := ur.TryRecv()
			if errors.Is(err, mpmc.ErrClosed) {
				open--
				urReady = nil
				continue
			}
			if err == nil {
				take(v)
			}
		case <-ticker.C:
			ticks++
		case <-ctx.Done():
			t.Fatalf("deadline with %d of %d values received, %d and %d left, closed %v and %v, %d open: a lost wake-up",
				got, 2*sendersPerChannel*per, br.Len(), ur.Len(), br.IsClosed(), ur.IsClosed(), open)
		}
	}
	wg.Wait()
	br.Release()
	ur.Release()
	require.Equal(t, 2*sendersPerChannel*per, got)
	for id, n := range next {
		require.Equal(t, uint64(per), n, "sender %d", id)
	}
	t.Logf("%d values, %d ticks", got, ticks)
}
