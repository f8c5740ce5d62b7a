//go:build zenq

package zenq_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"weak"

	upstream "github.com/alphadose/zenq/v2"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/ringtest"
	"github.com/shardedsink/shardedsink/ring/zenq"
)

// selectSender is the goroutine that zenq.New starts for every queue and
// that nothing can stop (see the package documentation). goleak ignores it
// and nothing else: a goroutine the adapter or a test leaked would still
// fail.
const selectSender = "github.com/alphadose/zenq/v2.(*ZenQ[...]).selectSender"

// probeEnv makes the test binary create one zenq queue and exit; see
// zenqCrashesUnderRace.
const probeEnv = "SHARDEDSINK_ZENQ_RACE_PROBE"

func TestMain(m *testing.M) {
	if os.Getenv(probeEnv) == "1" {
		zenq.New[int](1)
		os.Exit(0)
	}
	if raceEnabled {
		skipZenq = zenqCrashesUnderRace()
	}
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction(selectSender))
}

// skipZenq, when not empty, is why the tests that create zenq queues skip.
var skipZenq string

// zenqCrashesUnderRace reports why zenq cannot run in this race-enabled test
// binary, or "" if it can. zenq parks its selectSender goroutine with
// mcall(fast_park), which runs fast_park on the scheduler's g0 stack; when
// the race detector instruments zenq, fast_park's entry hook dereferences
// g0's nil race context and the process dies with SIGSEGV. Built with
// -gcflags=github.com/alphadose/zenq/v2=-race=false, zenq is left
// uninstrumented (the adapter and the tests still are) and works. A child
// process tries, so that the crash does not take this one down.
func zenqCrashesUnderRace() string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), probeEnv+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		first, _, _ := strings.Cut(string(out), "\n")
		return fmt.Sprintf("zenq crashes when the race detector instruments it (%v: %s); "+
			"race-test the adapter with -race -gcflags=github.com/alphadose/zenq/v2=-race=false", err, first)
	}
	return ""
}

// needZenq skips t when zenq cannot run in this test binary.
func needZenq(t testing.TB) {
	t.Helper()
	if skipZenq != "" {
		t.Skip(skipZenq)
	}
}

var _ ring.Factory[int] = zenq.Factory[int]

func TestConformance(t *testing.T) {
	needZenq(t)
	ringtest.Run(t, zenq.Factory[int])
}

func TestReleases(t *testing.T) {
	needZenq(t)
	ringtest.RunReleases(t, zenq.Factory[*[64]byte])
}

func FuzzRing(f *testing.F) {
	needZenq(f)
	ringtest.Fuzz(f, zenq.Factory[int])
}

func TestZenqUsesTheByteAtomicsThisPackageSupplies(t *testing.T) {
	// zenq's open/closed state is a byte read with Load8 and written with
	// Store8, which resolve to byteatomic.go. Closing a queue and reading
	// it dry goes through both.
	needZenq(t)
	q := upstream.New[int](4)
	require.False(t, q.IsClosed(), "Load8 reads the open state")
	require.False(t, q.Write(7), "an open queue accepts a write")
	require.False(t, q.Close(), "Store8 records closed-for-writes")
	require.True(t, q.Write(8), "a closed queue refuses writes (Load8 sees the Store8)")
	v, open := q.Read()
	require.True(t, open)
	require.Equal(t, 7, v)
	_, open = q.Read() // the closing slot: Store8 records fully closed
	require.False(t, open)
	require.True(t, q.IsClosed())
}

func TestNewPanicsOnCapacityOutOfRange(t *testing.T) {
	ringtest.RunBadCapacity(t, zenq.Factory[int], "zenq")
	require.PanicsWithValue(t,
		"zenq: capacity must be at most 65536 (zenq rings have at most 2^16 slots), got 65537",
		func() { zenq.New[int](65537) })
	require.PanicsWithValue(t,
		"zenq: capacity must be at most 65536 (zenq rings have at most 2^16 slots), got 1048576",
		func() { zenq.Factory[int](1 << 20) })
}

func TestTheRingHoldsExactlyItsCapacity(t *testing.T) {
	needZenq(t)
	// Powers of two, their neighbours (zenq rounds up to the next power of
	// two; the adapter must not), and the largest capacity.
	for _, capacity := range []int{1, 2, 3, 5, 7, 8, 9, 100, 1023, 1024, 1025, zenq.MaxCapacity} {
		t.Run(fmt.Sprint(capacity), func(t *testing.T) {
			r := zenq.New[int](capacity)
			require.Equal(t, capacity, r.Cap())
			for lap := range 3 {
				for i := range capacity {
					require.True(t, r.TryPush(lap*capacity+i), "push %d of %d, lap %d", i, capacity, lap)
				}
				require.Equal(t, capacity, r.Len())
				require.False(t, r.TryPush(-1), "a full ring must refuse")
				require.Equal(t, capacity, r.Len(), "a refused push leaves the ring unchanged")
				for i := range capacity {
					v, ok := r.TryPop()
					require.True(t, ok)
					require.Equal(t, lap*capacity+i, v, "values leave in push order")
				}
				v, ok := r.TryPop()
				require.False(t, ok, "an empty ring must report empty")
				require.Zero(t, v)
				require.Zero(t, r.Len())
			}
		})
	}
}

func TestValuesLeaveInPushOrderAcrossLaps(t *testing.T) {
	needZenq(t)
	// Interleave pushes and pops so that zenq's tickets wrap around its
	// ring many times at every fill level.
	r := zenq.New[int](6)
	next, want := 0, 0
	for round := range 2000 {
		for range round % 7 {
			if r.Len() == r.Cap() {
				require.False(t, r.TryPush(next))
				break
			}
			require.True(t, r.TryPush(next))
			next++
		}
		for range (round * 5) % 6 {
			v, ok := r.TryPop()
			if want == next {
				require.False(t, ok)
				break
			}
			require.True(t, ok)
			require.Equal(t, want, v)
			want++
		}
	}
}

func TestEightWritersDeliverEveryValueExactlyOnce(t *testing.T) {
	needZenq(t)
	const writers, readers = 8, 2
	perWriter := 100_000
	if testing.Short() {
		perWriter = 10_000
	}
	r := zenq.New[uint64](16)

	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				// A value is writer<<32 | sequence number.
				for v := uint64(w)<<32 | uint64(i); !r.TryPush(v); {
					runtime.Gosched() // full: wait for the readers
				}
			}
		})
	}

	total := writers * perWriter
	var (
		mu       sync.Mutex
		received int
		seen     = make([][]bool, writers)
		outOrder []string
	)
	for w := range seen {
		seen[w] = make([]bool, perWriter)
	}
	stop := time.Now().Add(2 * time.Minute)
	for range readers {
		wg.Go(func() {
			last := make([]int, writers) // per writer, the last sequence number this reader saw, plus one
			for {
				mu.Lock()
				done := received == total
				mu.Unlock()
				if done || time.Now().After(stop) {
					return
				}
				v, ok := r.TryPop()
				if !ok {
					runtime.Gosched()
					continue
				}
				w, i := int(v>>32), int(uint32(v))
				mu.Lock()
				if seen[w][i] {
					outOrder = append(outOrder, fmt.Sprintf("writer %d value %d arrived twice", w, i))
				}
				seen[w][i] = true
				received++
				if i < last[w] {
					outOrder = append(outOrder, fmt.Sprintf("writer %d: value %d after %d", w, i, last[w]-1))
				}
				last[w] = i + 1
				mu.Unlock()
			}
		})
	}
	wg.Wait()

	require.Empty(t, outOrder)
	require.Equal(t, total, received, "every value arrives (a stall would leave some behind)")
	for w := range seen {
		for i, ok := range seen[w] {
			require.True(t, ok, "writer %d value %d never arrived", w, i)
		}
	}
	require.Zero(t, r.Len())
}

func TestTryPushAndTryPopDoNotAllocate(t *testing.T) {
	needZenq(t)
	ringtest.RunNoAllocs(t, zenq.Factory[int])
}

func TestCloseDropsTheValuesItHolds(t *testing.T) {
	needZenq(t)
	r := zenq.New[*[64]byte](8)
	var held []weak.Pointer[[64]byte]
	for range 5 {
		p := new([64]byte)
		held = append(held, weak.Make(p))
		require.True(t, r.TryPush(p))
	}
	r.Close()
	require.Zero(t, r.Len())
	_, ok := r.TryPop()
	require.False(t, ok, "Close empties the ring")
	r.Close() // closing twice is harmless

	// The Ring stays reachable (it is used below), and zenq's slot array
	// is kept alive by its goroutine anyway: the values must be gone from
	// it all the same.
	require.Eventually(t, func() bool {
		runtime.GC()
		for _, w := range held {
			if w.Value() != nil {
				return false
			}
		}
		return true
	}, 5*time.Second, 10*time.Millisecond, "values dropped by Close must be collectable")

	require.True(t, r.TryPush(new([64]byte)), "the ring stays usable after Close")
	_, ok = r.TryPop()
	require.True(t, ok)
}
