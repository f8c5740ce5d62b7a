package natssink

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A take hands out the lowest free slot, whatever order the slots were
// freed in: after a backlog acked oldest first, steady traffic gets slot
// 0 again, not the slot the last ack freed (which kept shrink from giving
// back the chunks under it: TestTheSlotsOfAnOutageAreGivenBack).
func TestATakeHandsOutTheLowestFreeSlot(t *testing.T) {
	p := newPool(5*chunkLen+7, 1<<40, func(int32) {})
	const n = 5000
	for i := range n {
		idx, ok := p.take()
		require.True(t, ok)
		require.Equal(t, int32(i), idx)
	}
	for i := range n {
		p.put(int32(i), 0)
	}
	for i := range 3 {
		idx, ok := p.take()
		require.True(t, ok)
		require.Equal(t, int32(i), idx, "take %d after the backlog cleared", i)
	}
	p.put(1, 0)
	idx, _ := p.take()
	require.Equal(t, int32(1), idx, "a slot freed below the others in use")
	// Every slot, to the last of a partial word, then none.
	for {
		if _, ok := p.take(); !ok {
			break
		}
	}
	require.Equal(t, int32(5*chunkLen+7), p.highWater.Load())
	p.put(5*chunkLen+6, 0)
	idx, ok := p.take()
	require.True(t, ok)
	require.Equal(t, int32(5*chunkLen+6), idx)
	_, ok = p.take()
	require.False(t, ok)
}

// shrink drops the chunks above the highest slot in use, keeps at least
// the first, and lowers highWater to the end of what it keeps; a take of a
// dropped slot allocates its chunk again.
func TestShrinkDropsTheChunksAboveTheHighestSlotInUse(t *testing.T) {
	var ensured []int32
	p := newPool(8*chunkLen, 1<<40, func(idx int32) { ensured = append(ensured, idx) })
	for range 3*chunkLen + 10 {
		_, ok := p.take()
		require.True(t, ok)
	}
	for i := range int32(3*chunkLen + 10) {
		if i != 5 && i != 2*chunkLen+5 {
			p.put(i, 0)
		}
	}
	var dropped []int
	p.shrink(func(ci int) { dropped = append(dropped, ci) })
	require.Equal(t, []int{3}, dropped, "slots 5 and 2*chunkLen+5 are in use: chunks 0 to 2 stay")
	require.Equal(t, int32(3*chunkLen), p.highWater.Load())
	p.put(5, 0)
	p.put(2*chunkLen+5, 0)
	dropped = nil
	p.shrink(func(ci int) { dropped = append(dropped, ci) })
	require.Equal(t, []int{1, 2}, dropped, "none in use: the first chunk stays")
	require.Equal(t, int32(chunkLen), p.highWater.Load())
	ensured = nil
	for range chunkLen + 1 {
		_, ok := p.take()
		require.True(t, ok)
	}
	require.Len(t, ensured, 1, "the slot past the first chunk is allocated anew")
	require.Equal(t, int32(chunkLen), ensured[0])
}

// BenchmarkPool is the cost of a take and a put under the pool's lock,
// one goroutine: steady (one value in flight at a time) and a backlog of
// 5,000 taken and then freed oldest first.
//
//	go test -run '^$' -bench '^BenchmarkPool$' ./natssink/
func BenchmarkPool(b *testing.B) {
	b.Run("steady", func(b *testing.B) {
		p := newPool(DefaultMaxInFlight, 1<<40, func(int32) {})
		for b.Loop() {
			idx, _ := p.take()
			p.put(idx, 0)
		}
	})
	b.Run("backlog=5000", func(b *testing.B) {
		p := newPool(DefaultMaxInFlight, 1<<40, func(int32) {})
		idxs := make([]int32, 5000)
		for b.Loop() {
			for i := range idxs {
				idxs[i], _ = p.take()
			}
			for _, idx := range idxs {
				p.put(idx, 0)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(idxs)), "ns/value")
	})
}

// shrink reads only the slots below highWater: in a pool whose size is
// not a multiple of 64, the bits past the last slot are not slots in use.
func TestShrinkIgnoresTheBitsPastTheLastSlot(t *testing.T) {
	const slots = 3*chunkLen + 10
	p := newPool(slots, 1<<40, func(int32) {})
	for range slots {
		_, ok := p.take()
		require.True(t, ok)
	}
	for i := range int32(slots) {
		if i != 5 {
			p.put(i, 0)
		}
	}
	var dropped []int
	p.shrink(func(ci int) { dropped = append(dropped, ci) })
	require.Equal(t, []int{1, 2, 3}, dropped, "only slot 5 is in use: the first chunk stays")
}
