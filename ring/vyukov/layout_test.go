package vyukov

import (
	"runtime"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/layout"
)

// block returns the layout.CacheLine-sized block of a Ring that holds the byte at
// offset.
func block(offset uintptr) uintptr { return offset / layout.CacheLine }

func TestCursorsSitOnTheirOwnBlocks(t *testing.T) {
	var r Ring[int]
	head := unsafe.Offsetof(r.head)
	tail := unsafe.Offsetof(r.tail)
	readOnlyEnd := max(
		unsafe.Offsetof(r.slots)+unsafe.Sizeof(r.slots),
		unsafe.Offsetof(r.markBit)+unsafe.Sizeof(r.markBit),
		unsafe.Offsetof(r.oneLap)+unsafe.Sizeof(r.oneLap),
		unsafe.Offsetof(r.capacity)+unsafe.Sizeof(r.capacity),
	) - 1 // the last byte of the read-only fields

	require.GreaterOrEqual(t, tail-head, uintptr(layout.CacheLine), "head and tail must be a block apart")
	require.NotEqual(t, block(head), block(tail), "head and tail share a block")
	require.Less(t, block(readOnlyEnd), block(head), "the read-only fields share head's block")
	require.Less(t, block(readOnlyEnd), block(tail), "the read-only fields share tail's block")
	tailEnd := tail + unsafe.Sizeof(r.tail) - 1
	require.LessOrEqual(t, (block(tailEnd)+1)*layout.CacheLine, unsafe.Sizeof(r),
		"whatever the allocator places after the ring would share tail's block")
}

// The block offsets above hold in memory only if a Ring starts on a block
// boundary. The allocator places an object on a boundary of its size class,
// and every size class that is a multiple of 128 bytes keeps 128-byte
// alignment, so the size of a Ring must stay a multiple of layout.CacheLine.
func TestRingStartsOnABlockBoundary(t *testing.T) {
	require.Zero(t, unsafe.Sizeof(Ring[int]{})%layout.CacheLine, "size %d", unsafe.Sizeof(Ring[int]{}))
	require.Zero(t, unsafe.Sizeof(Ring[[3]string]{})%layout.CacheLine)
	if unsafe.Sizeof(uintptr(0)) < 8 {
		// The size classes of 32-bit platforms do not keep this alignment:
		// there head and tail are still a block apart, but the block
		// boundaries fall elsewhere.
		t.Skip("the allocator's 128-byte placement is checked on 64-bit platforms only")
	}
	for range 64 {
		r := New[int](1)
		require.Zero(t, uintptr(unsafe.Pointer(r))%layout.CacheLine, "a ring at %p", r)
	}
}

func TestStampsForCapacitiesThatAreNotPowersOfTwo(t *testing.T) {
	for _, capacity := range []int{1, 2, 3, 5, 6, 7, 8, 9, 100, 1000} {
		r := New[int](capacity)
		markBit, oneLap := r.markBit, r.oneLap
		require.Equal(t, uint64(0), markBit&(markBit-1), "capacity %d: markBit %d is not a power of two", capacity, markBit)
		require.Greater(t, markBit, uint64(capacity), "capacity %d: markBit %d leaves no room for the index", capacity, markBit)
		require.LessOrEqual(t, markBit, uint64(2*capacity), "capacity %d: markBit %d is not the smallest power above", capacity, markBit)
		require.Equal(t, 2*markBit, oneLap, "capacity %d: a lap is two marks", capacity)

		// stamp returns the stamp of the n-th position since the ring was
		// made: lap n/capacity, index n%capacity.
		stamp := func(n int) uint64 { return uint64(n/capacity)*oneLap + uint64(n%capacity) }

		// Three laps, one value at a time: every cursor and slot stamp
		// follows the scheme in the Ring documentation.
		for n := range 3 * capacity {
			i := n % capacity
			require.Equal(t, stamp(n), atomic.LoadUint64(&r.tail), "capacity %d, push %d: tail", capacity, n)
			require.Equal(t, stamp(n), atomic.LoadUint64(&r.slots[i].stamp), "capacity %d, push %d: slot %d is not empty for this lap", capacity, n, i)
			require.True(t, r.TryPush(n))
			require.Equal(t, stamp(n)+1, atomic.LoadUint64(&r.slots[i].stamp), "capacity %d, push %d: slot %d not published", capacity, n, i)
			require.Equal(t, stamp(n+1), atomic.LoadUint64(&r.tail), "capacity %d, push %d: tail after", capacity, n)

			require.Equal(t, stamp(n), atomic.LoadUint64(&r.head), "capacity %d, pop %d: head", capacity, n)
			v, ok := r.TryPop()
			require.True(t, ok)
			require.Equal(t, n, v)
			require.Equal(t, stamp(n)+oneLap, atomic.LoadUint64(&r.slots[i].stamp), "capacity %d, pop %d: slot %d not handed to the next lap", capacity, n, i)
			require.Equal(t, stamp(n+1), atomic.LoadUint64(&r.head), "capacity %d, pop %d: head after", capacity, n)
		}

		// Full from an index other than 0: the cursors' indexes meet, their
		// laps differ by one, and Len tells full from empty.
		require.True(t, r.TryPush(-1))
		_, _ = r.TryPop()
		for k := range capacity {
			require.True(t, r.TryPush(k))
		}
		require.False(t, r.TryPush(capacity), "capacity %d: push into a full ring", capacity)
		require.Equal(t, atomic.LoadUint64(&r.head)+oneLap, atomic.LoadUint64(&r.tail), "capacity %d: a full ring's tail is head plus one lap", capacity)
		require.Equal(t, capacity, r.Len())
		for k := range capacity {
			v, ok := r.TryPop()
			require.True(t, ok)
			require.Equal(t, k, v)
		}
		require.Equal(t, atomic.LoadUint64(&r.head), atomic.LoadUint64(&r.tail))
		require.Zero(t, r.Len())
	}
}

// requireWaits runs op in a new goroutine while another goroutine, which
// claimed a slot that op needs, is stalled; it requires that op is still
// waiting after the test has yielded the processor a thousand times, then
// plays the stalled goroutine by running release, and waits for op. A ring
// that gives up instead of waiting returns at once and fails; the new
// goroutine runs at the test's first yield, so timing cannot hide that.
func requireWaits(t *testing.T, what string, op, release func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		op()
	}()
	for range 1000 {
		runtime.Gosched()
	}
	select {
	case <-done:
		t.Fatalf("%s returned while a goroutine that claimed the slot it needs was stalled", what)
	default:
	}
	release()
	<-done
}

func TestTryPushWaitsForAPopInFlight(t *testing.T) {
	r := New[int](4)
	for i := range 4 {
		require.True(t, r.TryPush(i))
	}
	// Consumer A claims slot 0 by moving head, and stalls before it takes
	// the value and hands the slot on.
	h := atomic.LoadUint64(&r.head)
	require.True(t, atomic.CompareAndSwapUint64(&r.head, h, r.next(h)))
	// Consumer B pops the next value and returns. FIFO puts A's pop first,
	// so the ring now holds two values and is not full: TryPush must not
	// fail, and can only wait for A.
	v, ok := r.TryPop()
	require.True(t, ok)
	require.Equal(t, 1, v)

	var pushed bool
	requireWaits(t, "TryPush", func() { pushed = r.TryPush(4) }, func() {
		r.slots[0].value = 0
		atomic.StoreUint64(&r.slots[0].stamp, h+r.oneLap)
	})
	require.True(t, pushed, "TryPush reported full while a pop was in flight and a later one had completed")
	for _, want := range []int{2, 3, 4} {
		v, ok := r.TryPop()
		require.True(t, ok)
		require.Equal(t, want, v)
	}
}

func TestTryPopWaitsForAPushInFlight(t *testing.T) {
	r := New[int](4)
	// Producer A claims slot 0 by moving tail, and stalls before it
	// publishes its value.
	tl := atomic.LoadUint64(&r.tail)
	require.True(t, atomic.CompareAndSwapUint64(&r.tail, tl, r.next(tl)))
	// Producer B pushes into slot 1 and returns: the ring is not empty, so
	// TryPop must not fail, and can only wait for A's value, which is first.
	require.True(t, r.TryPush(1))

	var v int
	var ok bool
	requireWaits(t, "TryPop", func() { v, ok = r.TryPop() }, func() {
		r.slots[0].value = 100
		atomic.StoreUint64(&r.slots[0].stamp, tl+1)
	})
	require.True(t, ok, "TryPop reported empty while a push was in flight and a later one had completed")
	require.Equal(t, 100, v)
	v, ok = r.TryPop()
	require.True(t, ok)
	require.Equal(t, 1, v)
}

// The cursors and stamps are plain uint64 fields used with sync/atomic's
// functions, which need 8-byte alignment on 32-bit platforms. The
// zero-length atomic.Uint64 arrays provide it; this holds on every
// GOARCH, and CI runs it under GOARCH=386, where a misaligned 64-bit
// atomic would also panic.
func TestAtomicFieldsAreEightByteAligned(t *testing.T) {
	var r Ring[int8]
	require.Zero(t, unsafe.Offsetof(r.head)%8, "head at %d", unsafe.Offsetof(r.head))
	require.Zero(t, unsafe.Offsetof(r.tail)%8, "tail at %d", unsafe.Offsetof(r.tail))
	require.Equal(t, uintptr(8), unsafe.Alignof(r), "Ring alignment")
	var s slot[int8]
	require.Zero(t, unsafe.Offsetof(s.stamp)%8)
	require.Equal(t, uintptr(8), unsafe.Alignof(s), "slot alignment")
	require.Zero(t, unsafe.Sizeof(s)%8, "slot size %d: the next element's stamp would be misaligned", unsafe.Sizeof(s))
	small := New[int8](3)
	for i := range small.slots {
		require.Zero(t, uintptr(unsafe.Pointer(&small.slots[i].stamp))%8, "slot %d", i)
	}
}
