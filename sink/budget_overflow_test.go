package sink_test

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/sinkhook"
	"github.com/shardedsink/shardedsink/sink"
)

// maxSize is the largest size SizeOf may return (2^48, the doc's bound);
// a variable, so that the tests compile where int has 32 bits (they skip
// there).
var maxSize = int(uint64(1) << 48 & uint64(^uint(0)))

// At MaxQueuedBytes = math.MaxInt, one shard, values of 2^48 bytes:
// 32,767 of them fit in the share (32,767 x 2^48 = 2^63 - 2^48) and the
// next ones must be refused, not admitted by an overflowing sum.
// Guarantee 10 holds at every valid setting: QueuedBytes never exceeds
// the share, and never goes negative.
func TestTheByteBudgetDoesNotOverflowAtMaxInt(t *testing.T) {
	if strconv.IntSize != 64 {
		t.Skip("sizes of 2^48 need a 64-bit int")
	}
	const pushes = 40_000
	const fit = math.MaxInt64 / (1 << 48) // 32,767
	g := newGate[blob]()
	cfg := bytesCfg(1, 65536, 1, 0, math.MaxInt)
	s := newSink(t, cfg, g)
	defer g.release()
	h := s.Handle()
	// The first value goes to the gate's Drain call, where it still
	// holds its bytes: the rest fill the share behind it.
	require.True(t, h.Push(blob{0, maxSize}))
	g.waitEntered(t)
	accepted := 1
	for i := 1; i < pushes; i++ {
		if h.Push(blob{i, maxSize}) {
			accepted++
		}
	}
	st := s.Stats()
	require.Equal(t, fit, accepted, "the values that fit in MaxInt bytes")
	require.Equal(t, uint64(pushes-fit), st.Dropped)
	require.Equal(t, uint64(pushes-fit), st.DroppedForBytes)
	require.Equal(t, int64(fit)*int64(maxSize), st.QueuedBytes)
	q, share := sinkhook.ShardOf(h).QueuedBytes()
	require.GreaterOrEqual(t, q, int64(0))
	require.LessOrEqual(t, q, share)
	// Sink.Push takes the same path.
	require.False(t, s.Push(blob{pushes, maxSize}))
}

// At MaxBatchBytes = math.MaxInt, a round of values of 2^48 bytes is cut
// where the sum would pass MaxInt: no Drain call gets more than 32,767 of
// them, as the running sum of the cut must not overflow.
func TestMaxBatchBytesHoldsAtMaxInt(t *testing.T) {
	if strconv.IntSize != 64 {
		t.Skip("sizes of 2^48 need a 64-bit int")
	}
	const pushes = 40_000
	const fit = math.MaxInt64 / (1 << 48)
	g := newGate[blob]()
	cfg := bytesCfg(1, 65536, 65536, math.MaxInt, 0)
	var most int
	var total int
	calls := 0
	s := newSink(t, cfg, sink.ActionFunc[blob](func(ctx context.Context, batch []blob) {
		if calls == 0 {
			g.Drain(ctx, batch[:0]) // hold the first call until the ring is full
		}
		calls++
		most = max(most, len(batch))
		total += len(batch)
		var sum int64
		for _, b := range batch {
			require.LessOrEqual(t, int64(b.size), math.MaxInt64-sum, "a Drain call's sizes sum past MaxInt")
			sum += int64(b.size)
		}
	}))
	h := s.Handle()
	require.True(t, h.Push(blob{0, maxSize}))
	g.waitEntered(t)
	for i := 1; i < pushes; i++ {
		require.True(t, h.Push(blob{i, maxSize}))
	}
	g.release()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, s.Flush(ctx))
	require.Equal(t, pushes, total)
	require.Equal(t, fit, most, "the longest Drain call")
}
