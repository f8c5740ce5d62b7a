package mpmc_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/mpmc"
	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/vyukov"
)

// ForceSend racing other senders and receivers never fails on an open
// channel (displacing and pushing are one step with respect to every other
// send, on every backend), and never loses or repeats a value: each one is
// received, returned as displaced by exactly one ForceSend, or left in the
// channel.
func TestForceSendRacingSendsAndReceivesLosesNothing(t *testing.T) {
	const forcers, trySenders, perSender = 2, 2, 20000
	for _, k := range backends {
		t.Run(k.name, func(t *testing.T) {
			s, r := k.open(2)
			var mu sync.Mutex
			seen := make(map[int]int)
			record := func(vs []int) {
				mu.Lock()
				for _, v := range vs {
					seen[v]++
				}
				mu.Unlock()
			}
			var senders, receivers sync.WaitGroup
			start := make(chan struct{}) // every goroutine starts at once: contention from the first send
			for f := range forcers {
				senders.Go(func() {
					<-start
					var back []int
					for i := range perSender {
						v := f*perSender + i
						old, displaced, err := s.ForceSend(v)
						if displaced {
							back = append(back, old)
						}
						if err != nil {
							// The contract allows only nil or ErrClosed, and
							// nothing closes this channel.
							t.Errorf("ForceSend(%d): %v", v, err)
							back = append(back, v) // v stays with the caller
						}
					}
					record(back)
				})
			}
			for p := range trySenders {
				senders.Go(func() {
					<-start
					var back []int
					for i := range perSender {
						v := (forcers+p)*perSender + i
						if s.TrySend(v) != nil {
							back = append(back, v)
						}
					}
					record(back)
				})
			}
			stop := make(chan struct{})
			for range 2 {
				receivers.Go(func() {
					<-start
					var got []int
					for {
						if v, err := r.TryRecv(); err == nil {
							got = append(got, v)
							continue
						}
						select {
						case <-stop:
							record(got)
							return
						default:
						}
					}
				})
			}
			close(start)
			senders.Wait()
			close(stop)
			receivers.Wait()
			var rest []int
			for {
				v, err := r.TryRecv()
				if err != nil {
					break
				}
				rest = append(rest, v)
			}
			record(rest)
			require.Len(t, seen, (forcers+trySenders)*perSender, "a value was lost")
			for v, n := range seen {
				require.Equal(t, 1, n, "value %d accounted %d times", v, n)
			}
		})
	}
}

// hookRing is a ring that BoundedOn puts behind its guard (it has no
// ForcePush and no Close), with hooks at the points where ForceSend's
// interleavings matter: after its n-th failed TryPush, and after each
// successful TryPop.
type hookRing struct {
	ring.Ring[int]
	failedPushes    atomic.Int64
	afterFailedPush func(n int64)
	afterPop        func()
}

func (r *hookRing) TryPush(v int) bool {
	if r.Ring.TryPush(v) {
		return true
	}
	if n := r.failedPushes.Add(1); r.afterFailedPush != nil {
		r.afterFailedPush(n)
	}
	return false
}

func (r *hookRing) TryPop() (int, bool) {
	v, ok := r.Ring.TryPop()
	if ok && r.afterPop != nil {
		r.afterPop()
	}
	return v, ok
}

// A receive that comes between ForceSend's failed push and its pop makes
// room: ForceSend must then push into that room, or have displaced the
// oldest value before the receive, and never displace a value from a
// channel that had room.
func TestForceSendOnAGuardedRingDisplacesOnlyFromAFullChannel(t *testing.T) {
	hr := &hookRing{Ring: vyukov.New[int](2)}
	s, r := mpmc.BoundedOn[int](hr)
	require.NoError(t, s.TrySend(1))
	require.NoError(t, s.TrySend(2))
	received := make(chan int, 1)
	hr.afterFailedPush = func(n int64) {
		if n != 2 { // the first is ForceSend's TrySend; the second, its push with the ring held
			return
		}
		go func() {
			v, err := r.TryRecv()
			if err != nil {
				v = -1
			}
			received <- v
		}()
		// Give the receive every chance to happen now.
		for range 1000 {
			if len(received) > 0 {
				return
			}
			runtime.Gosched()
		}
	}
	old, displaced, err := s.ForceSend(3)
	require.NoError(t, err)
	got := <-received
	require.True(t, displaced)
	require.Equal(t, 1, old, "ForceSend displaced %d after a receive took %d and made room", old, got)
	require.Equal(t, 2, got)
	v, err := r.TryRecv()
	require.NoError(t, err)
	require.Equal(t, 3, v)
}

// Between a displacing ForceSend's pop and its push the guarded ring holds
// one value less; Len and IsEmpty must count the channel full, as it is
// before and after the ForceSend.
func TestLenCountsAGuardedRingFullWhileForceSendDisplaces(t *testing.T) {
	for _, capacity := range []int{1, 3} {
		hr := &hookRing{Ring: vyukov.New[int](capacity)}
		s, r := mpmc.BoundedOn[int](hr)
		for i := range capacity {
			require.NoError(t, s.TrySend(i))
		}
		var lens []int
		var empty []bool
		hr.afterPop = func() {
			lens = append(lens, r.Len())
			empty = append(empty, r.IsEmpty())
		}
		_, displaced, err := s.ForceSend(-1)
		require.NoError(t, err)
		require.True(t, displaced)
		require.Equal(t, []int{capacity}, lens, "capacity %d: Len between ForceSend's pop and push", capacity)
		require.Equal(t, []bool{false}, empty, "capacity %d: IsEmpty between ForceSend's pop and push", capacity)
	}
}

// A capacity-1 channel that ForceSend keeps full is never seen empty, on
// every backend: vyukov's ForcePush moves head and then tail, the guard
// pops and then pushes, and Len counts both steps as one.
func TestAChannelKeptFullByForceSendIsNeverSeenEmpty(t *testing.T) {
	for _, k := range backends {
		t.Run(k.name, func(t *testing.T) {
			s, r := k.open(1)
			require.NoError(t, s.TrySend(0))
			var done atomic.Bool
			var wg sync.WaitGroup
			wg.Go(func() {
				defer done.Store(true)
				for i := 1; i <= 50000; i++ {
					if _, _, err := s.ForceSend(i); err != nil {
						t.Errorf("ForceSend: %v", err)
						return
					}
				}
			})
			seenEmpty := 0
			for !done.Load() {
				if r.IsEmpty() {
					seenEmpty++
				}
			}
			wg.Wait()
			require.Zero(t, seenEmpty, "IsEmpty reported true on a channel kept full by ForceSend")
		})
	}
}
