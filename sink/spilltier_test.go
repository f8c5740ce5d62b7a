package sink_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/sinkhook"
	"github.com/shardedsink/shardedsink/sink"
	"github.com/shardedsink/shardedsink/sink/spill"
)

// u64Codec is the tests' Codec: a uint64 as 8 bytes, padded to size
// bytes so that a test can fill a budget.
type u64Codec struct{ size int }

func (c u64Codec) Append(dst []byte, v uint64) ([]byte, error) {
	dst = binary.LittleEndian.AppendUint64(dst, v)
	for range c.size - 8 {
		dst = append(dst, 0)
	}
	return dst, nil
}

func (u64Codec) Decode(p []byte) (uint64, error) {
	if len(p) < 8 {
		return 0, fmt.Errorf("a record of %d bytes", len(p))
	}
	return binary.LittleEndian.Uint64(p), nil
}

// spillCfg is a small sink with a spill tier in dir.
func spillCfg(dir string, shards int) sink.Config[uint64] {
	return sink.Config[uint64]{
		Shards:           shards,
		RingCapacity:     64,
		BatchSize:        16,
		OverloadInterval: 50 * time.Millisecond,
		DisableStealing:  true, // for the order of each producer's values
		Logger:           quiet,
		Spill: sink.Spill[uint64]{
			Dir:          dir,
			MaxBytes:     int64(shards) * 8 << 20,
			Codec:        u64Codec{size: 8},
			SyncInterval: 20 * time.Millisecond,
		},
	}
}

// producerValue is value seq of producer p.
func producerValue(p, seq int) uint64 { return uint64(p)<<32 | uint64(seq) }

// requireInOrderPerProducer checks that got holds every value of each of
// producers producers, n each, once, and each producer's in its order.
func requireInOrderPerProducer(t *testing.T, got []uint64, producers, n int) {
	t.Helper()
	next := make([]int, producers)
	for _, v := range got {
		p, seq := int(v>>32), int(uint32(v))
		require.Less(t, p, producers, "value %#x", v)
		require.Equal(t, next[p], seq, "producer %d: value %d came after %d", p, seq, next[p]-1)
		next[p]++
	}
	for p := range producers {
		require.Equal(t, n, next[p], "producer %d: values delivered", p)
	}
}

// TestASpilledShardKeepsEveryValueInOrderThroughAStalledDrain: while
// Drain stalls, four producers push 20 times what the rings hold; nothing
// is shed, and once Drain comes back it gets every value once, each
// producer's in order, across the disk and the ring.
func TestASpilledShardKeepsEveryValueInOrderThroughAStalledDrain(t *testing.T) {
	const producers, n = 4, 1280
	g := newGate[uint64]()
	s := newSink(t, spillCfg(t.TempDir(), 2), g)
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			h := s.HandleFor(uint64(p))
			for i := range n {
				require.True(t, h.Push(producerValue(p, i)), "producer %d, value %d", p, i)
			}
		})
	}
	wg.Wait()
	st := s.Stats()
	require.Zero(t, st.Dropped)
	require.Positive(t, st.Spilled, "the stalled Drain made the rings spill")
	g.release()
	require.NoError(t, s.Flush(t.Context()))
	requireInOrderPerProducer(t, g.values(), producers, n)
	st = s.Stats()
	require.Equal(t, st.Spilled, st.SpillDrained)
	require.Zero(t, st.SpillQueued)
	require.Equal(t, uint64(producers*n), st.Drained)
}

// TestAFullDiskShedsForTheDisk: with a budget of one small segment per
// shard and Drain stalled, the tier fills; pushes are then refused and
// counted as dropped for the disk, and what was spilled still arrives in
// order once Drain comes back.
func TestAFullDiskShedsForTheDisk(t *testing.T) {
	g := newGate[uint64]()
	cfg := spillCfg(t.TempDir(), 1)
	cfg.Spill.MaxBytes = sink.MinSpillShardBytes
	cfg.Spill.Codec = u64Codec{size: 1000}
	s := newSink(t, cfg, g)
	h := s.Handle()
	accepted := 0
	for i := 0; i < 400; i++ {
		if h.Push(producerValue(0, accepted)) {
			accepted++
		}
	}
	st := s.Stats()
	require.Positive(t, st.DroppedForDisk, "a full tier sheds for the disk")
	require.Equal(t, st.Dropped, st.DroppedForDisk)
	require.Zero(t, st.DroppedForSlots())
	require.LessOrEqual(t, st.SpillBytes, int64(sink.MinSpillShardBytes))
	g.release()
	require.NoError(t, s.Flush(t.Context()))
	requireInOrderPerProducer(t, g.values(), 1, accepted)
	// Drained, the tier gives its whole budget back, the last segment
	// too: with a budget of one segment, anything kept would stop
	// spilling for good.
	require.Zero(t, s.Stats().SpillBytes)
}

// TestANewSinkHandsOnWhatTheLastOneLeft: a Shutdown that its ctx cuts
// short leaves what the rings and the tier hold on disk; a sink started
// on the directory hands it to Drain first, in order, counted as
// Recovered. Only the batch the stalled Drain call gave up is missing.
func TestANewSinkHandsOnWhatTheLastOneLeft(t *testing.T) {
	dir := t.TempDir()
	const n = 1000
	g := newGate[uint64]()
	s, err := sink.New(spillCfg(dir, 1), g)
	require.NoError(t, err)
	h := s.Handle()
	for i := range n {
		require.True(t, h.Push(producerValue(0, i)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, s.Shutdown(ctx), context.DeadlineExceeded)
	<-s.Done()
	first := s.Stats()
	// The cut Drain call had the first batch, and gave it up.
	handedBefore := int(first.Drained)

	g2 := newGate[uint64]()
	g2.release()
	s2 := newSink(t, spillCfg(dir, 1), g2)
	require.NoError(t, s2.Flush(t.Context()))
	require.Eventually(t, func() bool { return len(g2.values()) == n-handedBefore }, 5*time.Second, time.Millisecond)
	got := g2.values()
	for i, v := range got {
		require.Equal(t, producerValue(0, handedBefore+i), v)
	}
	require.Equal(t, uint64(n-handedBefore), s2.Stats().Recovered)
}

// TestTheSpillDirectoryIsTheSinksAlone: a second sink on the directory
// gets an error wrapping spill.ErrLocked from New, and the files are the
// owner's only.
func TestTheSpillDirectoryIsTheSinksAlone(t *testing.T) {
	dir := t.TempDir()
	newSink(t, spillCfg(dir, 2), newGate[uint64]())
	_, err := sink.New(spillCfg(dir, 3), newGate[uint64]())
	require.ErrorIs(t, err, spill.ErrLocked)
	fi, err := os.Stat(filepath.Join(dir, "shard-0000"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
}

// TestASinkWithFewerShardsReadsTheOthersDirectories: what an earlier sink
// with three shards left reaches Drain through a sink with one, and the
// directories of the shards it no longer has are removed.
func TestASinkWithFewerShardsReadsTheOthersDirectories(t *testing.T) {
	dir := t.TempDir()
	const producers, n = 3, 300
	g := newGate[uint64]()
	s, err := sink.New(spillCfg(dir, 3), g)
	require.NoError(t, err)
	for p := range producers {
		h := s.HandleFor(uint64(p))
		for i := range n {
			require.True(t, h.Push(producerValue(p, i)))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.Error(t, s.Shutdown(ctx))
	<-s.Done()
	left := uint64(producers*n) - s.Stats().Drained

	var got atomic.Uint64
	s2 := newSink(t, spillCfg(dir, 1), sink.ActionFunc[uint64](func(_ context.Context, b []uint64) {
		got.Add(uint64(len(b)))
	}))
	require.Eventually(t, func() bool { return got.Load() == left }, 5*time.Second, time.Millisecond)
	require.NoError(t, s2.Flush(t.Context()))
	require.Eventually(t, func() bool {
		_, err1 := os.Stat(filepath.Join(dir, "shard-0001"))
		_, err2 := os.Stat(filepath.Join(dir, "shard-0002"))
		return errors.Is(err1, os.ErrNotExist) && errors.Is(err2, os.ErrNotExist)
	}, 5*time.Second, time.Millisecond)
}

// TestSpillConfigNamesEveryBadField: one error names every bad field of
// Spill and its value.
func TestSpillConfigNamesEveryBadField(t *testing.T) {
	_, err := sink.New(sink.Config[uint64]{
		Shards:         2,
		Overflow:       sink.DropOldest,
		MaxQueuedBytes: 100,
		SizeOf:         func(uint64) int { return 8 },
		Spill:          sink.Spill[uint64]{Dir: t.TempDir(), MaxBytes: 1000, SyncInterval: -time.Second},
	}, newGate[uint64]())
	require.ErrorIs(t, err, sink.ErrInvalidConfig)
	for _, want := range []string{"Spill.MaxBytes = 1000", "Spill.Codec = nil", "Spill.SyncInterval = -1s", "Overflow = drop-oldest"} {
		require.ErrorContains(t, err, want)
	}
	_, err = sink.New(sink.Config[uint64]{Spill: sink.Spill[uint64]{MaxBytes: 1 << 20, Codec: u64Codec{}}}, newGate[uint64]())
	require.ErrorContains(t, err, "Spill.MaxBytes = 1048576")
	require.ErrorContains(t, err, "Spill.Codec = sink_test.u64Codec")
}

// With MaxQueuedBytes, a spilled value gives its bytes back: a stalled
// Drain does not hold the budget, pushes go on past what the budget alone
// would let in, and once everything is drained the sink holds no bytes.
func TestASpilledValueGivesItsBytesBack(t *testing.T) {
	g := newGate[uint64]()
	cfg := spillCfg(t.TempDir(), 1)
	cfg.SizeOf = func(uint64) int { return 100 }
	cfg.MaxQueuedBytes = 64 * 100 // the ring's worth
	s := newSink(t, cfg, g)
	h := s.Handle()
	const n = 2000
	for i := range n {
		require.True(t, h.Push(producerValue(0, i)), "value %d", i)
	}
	st := s.Stats()
	require.Zero(t, st.Dropped)
	require.LessOrEqual(t, st.QueuedBytes, int64(cfg.MaxQueuedBytes))
	g.release()
	require.NoError(t, s.Flush(t.Context()))
	requireInOrderPerProducer(t, g.values(), 1, n)
	require.Zero(t, s.Stats().QueuedBytes)
}

// A PushWait into a full ring behind a stalled Drain, with no other push
// parked, wakes the sleeping spiller (with the hand-off on, a Drain call
// does not): it gets in once the spiller moves the ring to disk, and
// Drain gets every value in order once it comes back.
func TestAPushWaitWakesASleepingSpiller(t *testing.T) {
	cfg := spillCfg(t.TempDir(), 1)
	g := newGate[uint64]()
	s := newSink(t, cfg, g)
	time.Sleep(50 * time.Millisecond) // past spillLinger: the spiller sleeps
	h := s.Handle()
	require.True(t, h.Push(0))
	g.waitEntered(t)
	for i := range cfg.RingCapacity {
		require.True(t, h.Push(uint64(i+1)), "the ring filled early")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	require.NoError(t, h.PushWait(ctx, uint64(cfg.RingCapacity+1)), "the PushWait did not get in")
	require.Positive(t, s.Stats().Spilled, "the ring was not spilled")
	g.release()
	require.NoError(t, s.Flush(t.Context()))
	requireInOrderPerProducer(t, g.values(), 1, cfg.RingCapacity+2)
}

// box is a value that its Codec recycles: Append marks it spent.
type box struct {
	v     uint64
	spent atomic.Bool
}

// recyclingCodec encodes a box's v and marks the box spent, as a Codec
// that returns values to a pool would recycle them.
type recyclingCodec struct{}

func (recyclingCodec) Append(dst []byte, b *box) ([]byte, error) {
	dst = binary.LittleEndian.AppendUint64(dst, b.v)
	b.spent.Store(true)
	return dst, nil
}

func (recyclingCodec) Decode(p []byte) (*box, error) {
	if len(p) != 8 {
		return nil, fmt.Errorf("a record of %d bytes", len(p))
	}
	return &box{v: binary.LittleEndian.Uint64(p)}, nil
}

// The sink does not use a value after its Codec's Append (Codec's doc: a
// Codec may recycle it): through a stalled Drain, neither Drain nor the
// byte budget's SizeOf ever sees a value that Append spent, and every
// value arrives once, in order.
func TestTheSinkDoesNotUseAValueAfterItsAppend(t *testing.T) {
	g := newGate[*box]()
	var spentSized atomic.Int64
	cfg := sink.Config[*box]{
		Shards:          1,
		RingCapacity:    64,
		BatchSize:       16,
		DisableStealing: true,
		Logger:          quiet,
		SizeOf: func(b *box) int {
			if b.spent.Load() {
				spentSized.Add(1)
			}
			return 100
		},
		MaxQueuedBytes: 64 * 100,
		Spill: sink.Spill[*box]{
			Dir:          t.TempDir(),
			MaxBytes:     8 << 20,
			Codec:        recyclingCodec{},
			SyncInterval: 20 * time.Millisecond,
		},
	}
	s := newSink(t, cfg, g)
	h := s.Handle()
	const n = 2000
	for i := range n {
		require.True(t, h.Push(&box{v: producerValue(0, i)}), "value %d", i)
	}
	require.Positive(t, s.Stats().Spilled, "the stalled Drain made the ring spill")
	g.release()
	require.NoError(t, s.Flush(t.Context()))
	got := g.values()
	vs := make([]uint64, len(got))
	for k, b := range got {
		require.False(t, b.spent.Load(), "Drain got value %#x after its Append", b.v)
		vs[k] = b.v
	}
	requireInOrderPerProducer(t, vs, 1, n)
	require.Zero(t, spentSized.Load(), "SizeOf calls on values after their Append")
}

// HandOffState says the spill tier takes a shard's values while a stalled
// Drain leaves them to it, and no longer once the tier is empty again
// and Drain keeps up.
func TestHandOffStateSeesTheSpillTierTake(t *testing.T) {
	g := newGate[uint64]()
	s := newSink(t, spillCfg(t.TempDir(), 1), g)
	h := s.Handle()
	_, spilling, _ := sinkhook.ShardOf(h).HandOffState()
	require.False(t, spilling, "the tier takes before Drain is slow")
	deadline := time.Now().Add(10 * time.Second)
	for _, spilling, _ := sinkhook.ShardOf(h).HandOffState(); !spilling; _, spilling, _ = sinkhook.ShardOf(h).HandOffState() {
		if time.Now().After(deadline) {
			t.Fatalf("HandOffState: the tier does not take behind a stalled Drain (spilled %d)", s.Stats().Spilled)
		}
		require.True(t, h.Push(producerValue(0, 0)))
		time.Sleep(time.Millisecond)
	}
	g.release()
	require.NoError(t, s.Flush(t.Context()))
	deadline = time.Now().Add(10 * time.Second)
	for _, spilling, _ := sinkhook.ShardOf(h).HandOffState(); spilling; _, spilling, _ = sinkhook.ShardOf(h).HandOffState() {
		if time.Now().After(deadline) {
			t.Fatal("HandOffState: the tier still takes 10 s after Flush")
		}
		time.Sleep(time.Millisecond)
	}
}

// gatedWithValues starts a sink with a spill tier in dir, whose Drain
// holds its first batch of each shard until g is released, and pushes n
// values into each of its shards (producerValue(shard, i)).
func gatedWithValues(t *testing.T, dir string, shards, n int) (*sink.Sink[uint64], *gate[uint64]) {
	t.Helper()
	g := newGate[uint64]()
	s, err := sink.New(spillCfg(dir, shards), g)
	require.NoError(t, err)
	for p, h := range shardHandles(s, shards) {
		for i := range n {
			require.True(t, h.Push(producerValue(p, i)))
		}
	}
	return s, g
}

// shardHandles returns a Handle of each of s's shards, by shard.
func shardHandles[T any](s *sink.Sink[T], shards int) []*sink.Handle[T] {
	hs := make([]*sink.Handle[T], shards)
	for found := 0; found < shards; {
		h := s.Handle()
		if hs[h.Shard()] == nil {
			hs[h.Shard()] = h
			found++
		}
	}
	return hs
}

// requireAccounted checks the identity of Stats' doc on a quiet sink
// with a spill tier: every value pushed into it, or recovered from an
// earlier sink's directory, is drained, in a ring, in the tier, or
// dropped (a value the tier lost is in Dropped, as DroppedForDisk and
// SpillLost), once. pushes counts the calls, accepted or not.
func requireAccounted(t testing.TB, st sink.Stats, pushes uint64) {
	t.Helper()
	require.Equal(t, pushes+st.Recovered, st.Drained+uint64(st.Queued)+uint64(st.SpillQueued)+st.Dropped,
		"Drained %d + Queued %d + SpillQueued %d + Dropped %d against %d pushes and %d recovered (Spilled %d, SpillDrained %d, SpillLost %d, DroppedForDisk %d)",
		st.Drained, st.Queued, st.SpillQueued, st.Dropped, pushes, st.Recovered, st.Spilled, st.SpillDrained, st.SpillLost, st.DroppedForDisk)
	require.LessOrEqual(t, st.SpillLost, st.DroppedForDisk)
	require.LessOrEqual(t, st.DroppedForDisk, st.Dropped)
}

// pacedCollector is a collector whose Drain calls take a millisecond
// each, so that a backlog takes a while to reach it.
type pacedCollector struct{ collector[uint64] }

func (c *pacedCollector) Drain(ctx context.Context, batch []uint64) {
	time.Sleep(time.Millisecond)
	c.collector.Drain(ctx, batch)
}

// Guarantee 5 holds while a sink reads back what an earlier sink left:
// a sink started on a directory holding thousands of an earlier sink's
// values, into which one value a shard is pushed, returns from Flush
// only once those new values, behind the recovered ones, have been
// handed to Drain. Before, Flush's target counted the values this sink
// accepted and its progress the values read back from disk too, so it
// returned after the first 32 recovered values, none of the new ones.
func TestFlushWaitsForNewValuesBehindWhatAnEarlierSinkLeft(t *testing.T) {
	dir := t.TempDir()
	const shards, n = 2, 2000
	s, _ := gatedWithValues(t, dir, shards, n)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, s.Shutdown(ctx), context.DeadlineExceeded)
	<-s.Done()
	first := s.Stats()
	requireAccounted(t, first, shards*n)
	left := shards*n - first.Drained
	require.Greater(t, left, uint64(1000), "what the first sink left on disk")

	c := &pacedCollector{}
	s2 := newSink(t, spillCfg(dir, shards), c)
	for p, h := range shardHandles(s2, shards) {
		require.True(t, h.Push(producerValue(shards+p, 0)))
	}
	flush(t, s2)
	got := c.values()
	for p := range shards {
		require.True(t, slices.Contains(got, producerValue(shards+p, 0)),
			"Flush returned with %d of the %d recovered values handed to Drain, and not shard %d's new value", len(got), left, p)
	}
	require.Len(t, got, int(left)+shards, "every recovered value, and the new ones")
	st := s2.Stats()
	require.Equal(t, left, st.Recovered)
	requireAccounted(t, st, shards)
}

// A full spill tier sheds for the disk only while it is full: once Drain
// has caught up and the tier has given its budget back, the next stall
// spills again from the first push its ring refuses. Before, the full
// budget set a flag that only the spiller's next successful write
// cleared: the next stall's pushes that the ring refused were shed for
// the disk into the empty tier, and did not park for the spiller, which
// slept on (22 of 40 shed).
func TestATierThatWasFullTakesTheNextStall(t *testing.T) {
	g := &stallable{}
	cfg := spillCfg(t.TempDir(), 1)
	cfg.Spill.MaxBytes = sink.MinSpillShardBytes // 65 records of 1000 bytes
	cfg.Spill.Codec = u64Codec{size: 1000}
	s := newSink(t, cfg, g)
	t.Cleanup(func() { g.stalled.Store(false) }) // before the sink's Shutdown
	h := s.Handle()
	var pushes, accepted uint64
	push := func() {
		pushes++
		if h.Push(accepted) {
			accepted++
		}
	}
	// stall stalls Drain and waits until the stalled call is slow.
	stall := func() {
		g.stalled.Store(true)
		push()
		time.Sleep(3 * sink.SlowDrain)
	}
	stall()
	for range 400 {
		push()
	}
	st := s.Stats()
	require.Positive(t, st.DroppedForDisk, "cycle 1: the tier did not fill")
	g.stalled.Store(false)
	flush(t, s)
	before := s.Stats()
	require.Zero(t, before.SpillBytes, "cycle 1: the tier still holds bytes")
	require.Zero(t, before.SpillQueued)

	stall()
	const more = 100 // the ring's 64, and 36 for the tier's 65
	for range more {
		push()
	}
	st = s.Stats()
	require.Equal(t, before.Dropped, st.Dropped,
		"cycle 2: %d of %d values shed into an empty spill tier (SpillBytes before %d, SpillErrors %d)",
		st.Dropped-before.Dropped, more+1, before.SpillBytes, st.SpillErrors)
	require.Positive(t, st.Spilled-before.Spilled, "cycle 2: nothing spilled")
	g.stalled.Store(false)
	flush(t, s)
	got := g.values()
	require.Len(t, got, int(accepted))
	for i, v := range got {
		require.Equal(t, uint64(i), v, "value %d", i)
	}
	requireAccounted(t, s.Stats(), pushes)
}

// The overload report names the disk when the spill tier's budget drops
// values: the default record says so, carries dropped_for_disk, and its
// likely_cause names Spill.MaxBytes; an OnOverload gets the disk's part
// of each report's Delta in ForDisk. Before, the record said "values
// dropped because rings were full", with no dropped_for_disk and a cause
// that did not name the disk.
func TestTheOverloadReportNamesTheDisk(t *testing.T) {
	for _, custom := range []bool{false, true} {
		g := newGate[uint64]()
		cfg := spillCfg(t.TempDir(), 1)
		cfg.Spill.MaxBytes = sink.MinSpillShardBytes
		cfg.Spill.Codec = u64Codec{size: 1000}
		logger, logs := testLogger()
		cfg.Logger = logger
		r := &recorder{}
		if custom {
			cfg.OnOverload = r.onOverload
		}
		s := newSink(t, cfg, g)
		h := s.Handle()
		for i := range 400 {
			h.Push(uint64(i))
		}
		st := s.Stats()
		require.Positive(t, st.DroppedForDisk, "the tier did not fill")
		require.Zero(t, st.DroppedForSlots(), "a ring shed for want of slots: the test does not test the disk alone")
		g.release()
		flush(t, s)
		require.NoError(t, s.Shutdown(t.Context())) // its last check reports what is left
		st = s.Stats()
		if custom {
			var delta, forDisk uint64
			for _, o := range r.snapshot() {
				require.LessOrEqual(t, o.ForDisk, o.Delta, "%+v", o)
				delta, forDisk = delta+o.Delta, forDisk+o.ForDisk
			}
			require.Equal(t, st.Dropped, delta)
			require.Equal(t, st.DroppedForDisk, forDisk, "the reports' ForDisk")
			continue
		}
		out := logs.String()
		require.Contains(t, out, "values dropped")
		require.NotContains(t, out, "because rings were full", "values the disk budget dropped blamed on full rings")
		require.Contains(t, out, "dropped_for_disk=")
		require.Contains(t, out, "Spill.MaxBytes", "the likely cause does not name the disk")
	}
}

// segmentFiles returns the spill segments under dir and their bytes.
func segmentFiles(t *testing.T, dir string) (files []string, bytes int64) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".seg" {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		files, bytes = append(files, path), bytes+fi.Size()
		return nil
	}))
	return files, bytes
}

// A clean Shutdown, everything drained, leaves none of the values on
// disk: "segments whose records have all been read and marked done are
// deleted", the last one too. Before, each shard's last segment stayed
// (up to a segment's size: 3.6 to 84 MiB), marked done by the cursor but
// holding values the user took for delivered. A sink started on the
// directory afterwards hands nothing twice, and spills and reads back as
// before.
func TestACleanShutdownLeavesNoValueOnDisk(t *testing.T) {
	dir := t.TempDir()
	const shards, n = 2, 2000
	s, g := gatedWithValues(t, dir, shards, n)
	require.Positive(t, s.Stats().Spilled)
	g.release()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
	requireInOrderPerProducer(t, g.values(), shards, n)
	requireAccounted(t, s.Stats(), shards*n)
	files, bytes := segmentFiles(t, dir)
	require.Empty(t, files, "a clean Shutdown left %d bytes of values on disk", bytes)

	// The next sink on the directory: nothing recovered, and a stall
	// spills and reads back in order.
	g2 := newGate[uint64]()
	s2 := newSink(t, spillCfg(dir, shards), g2)
	h := shardHandles(s2, shards)[0]
	for i := range n {
		require.True(t, h.Push(producerValue(0, i)))
	}
	require.Positive(t, s2.Stats().Spilled)
	g2.release()
	flush(t, s2)
	requireInOrderPerProducer(t, g2.values(), 1, n)
	st := s2.Stats()
	require.Zero(t, st.Recovered)
	requireAccounted(t, st, n)
}

// A Shutdown cut short while the tier is full keeps the order and counts
// what the disk cannot take: the value the spiller holds and the ring's
// values, which the full tier cannot take, are dropped for the disk; the
// tier's values go to the next sink, first; a second Shutdown has nothing
// left to drain and returns nil. Before, the held value was lost
// uncounted (SpillQueued 66 against 65 on disk), the second Shutdown
// handed the ring's 64 values to Drain before the next sink handed the
// older ones, and it returned "66 values left ...: context deadline
// exceeded" with no deadline.
func TestAShutdownCutShortWhileTheTierIsFullKeepsOrderAndCounts(t *testing.T) {
	dir := t.TempDir()
	g := newGate[uint64]()
	cfg := spillCfg(dir, 1)
	cfg.Spill.MaxBytes = sink.MinSpillShardBytes
	cfg.Spill.Codec = u64Codec{size: 1000}
	s, err := sink.New(cfg, g)
	require.NoError(t, err)
	h := s.Handle()
	const pushes = 400
	var accepted uint64
	for range pushes {
		if h.Push(accepted) {
			accepted++
		}
	}
	require.Positive(t, s.Stats().DroppedForDisk, "the tier did not fill")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, s.Shutdown(ctx), context.DeadlineExceeded)
	g.release() // the cut Drain call returns: its batch is handed
	<-s.Done()
	// No deadline, so that a drain it made could not end by one; cancelled
	// after 10 s so that a hang fails the test.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer time.AfterFunc(10*time.Second, cancel2).Stop()
	require.NoError(t, s.Shutdown(ctx2), "a second Shutdown after the tier was closed")
	first := s.Stats()
	requireAccounted(t, first, pushes)
	require.Zero(t, first.Queued, "values left in the ring")

	c := &collector[uint64]{}
	s2 := newSink(t, cfg, c)
	// Flush does not wait for recovered values (no value of s2's is behind
	// them): wait for the count.
	eventually(t, func() bool { return c.count() >= first.SpillQueued }, "the next sink reads back what the first left")
	flush(t, s2)
	second := s2.Stats()
	require.Equal(t, uint64(first.SpillQueued), second.Recovered,
		"the first sink's SpillQueued against what the next one read back (SpillLost %d)", first.SpillLost)
	got := append(g.values(), c.values()...)
	for i := 1; i < len(got); i++ {
		require.Less(t, got[i-1], got[i], "value %d of %d handed to Drain after value %d", got[i], len(got), got[i-1])
	}
	require.Equal(t, first.Drained+second.Recovered, uint64(len(got)))
	require.Equal(t, accepted, uint64(len(got))+first.SpillLost, "every accepted value delivered or counted lost")
}

// During a stall the spiller starts on its own, once the Drain call has
// run SlowDrain, and moves a ring that is a quarter full: no push has to
// park on a full ring first, so a crash in the stall finds at most a
// quarter of the ring in memory once the spiller runs (issue 64, item 7;
// before, the spiller slept until a push parked, and the ring held all
// 40 values: Spilled 0).
func TestTheSpillerStartsInAStallWithoutAParkedPush(t *testing.T) {
	release := make(chan struct{})
	s, err := sink.New(spillCfg(t.TempDir(), 1), sink.ActionFunc[uint64](func(ctx context.Context, _ []uint64) {
		select {
		case <-release:
		case <-ctx.Done():
		}
	}))
	require.NoError(t, err)
	defer func() {
		close(release)
		require.NoError(t, s.Shutdown(context.Background()))
	}()
	h := s.Handle()
	time.Sleep(20 * time.Millisecond) // the spiller, idle, sleeps until rung
	require.True(t, h.Push(0))        // the Drain call that stalls
	for s.Stats().Queued != 0 {
		time.Sleep(time.Millisecond)
	}
	for i := range 40 { // more than a quarter of 64, far from full
		require.True(t, h.Push(uint64(i+1)))
	}
	deadline := time.Now().Add(2 * time.Second)
	for s.Stats().Spilled == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	st := s.Stats()
	require.Positive(t, st.Spilled, "the spiller did not move a quarter-full ring in a stall: %+v", st)
	require.Zero(t, st.HandOffs, "a push parked: the test shows nothing")
	require.LessOrEqual(t, int(st.Queued), 64/4, "more than a quarter of the ring stayed in memory: %+v", st)
}

// A stalled Drain sheds nothing while the disk has room (issue 64, item
// 6): sixteen producers push flat out for 300 ms into two 64-slot rings
// whose Drain stalls from its first call; every push parks at most while
// the spiller moves values to disk, and none is shed. Before, a parked
// push was woken for the room each move freed and lost it, move after
// move, to pushes that ran (woken 42 to 48 times in 100 ms), until
// HandOffWait ran out and it was shed as ring-full with the disk 1 %
// used: 1 to 14 values, in 6 runs of 10 under -race and 10 of 10
// without. A round in which the test's process did not run for half of
// HandOffWait (a loaded machine: every parked push and the spiller
// stood still for it, and the pushes' bound passed) shows nothing, and
// is run again, up to five rounds.
func TestAStalledDrainShedsNothingWhileTheDiskHasRoom(t *testing.T) {
	for round := 1; ; round++ {
		dropped, froze := stallFlatOut(t)
		if dropped == 0 {
			return
		}
		if froze < sink.DefaultHandOffWait/2 || round == 5 {
			t.Fatalf("round %d: %d values shed as ring-full with the disk's room (the process stood still %v at most)", round, dropped, froze)
		}
		t.Logf("round %d: %d values shed while the process stood still for %v: again", round, dropped, froze)
	}
}

// stallFlatOut is a round of TestAStalledDrainShedsNothingWhileTheDiskHasRoom:
// it reports how many values were shed, and the longest the process
// stood still meanwhile (a goroutine's sleep of a millisecond, less the
// millisecond). Every value not shed reaches Drain once, each producer's
// in order.
func stallFlatOut(t *testing.T) (dropped uint64, froze time.Duration) {
	const producers, shards = 16, 2
	g := newGate[uint64]()
	s, err := sink.New(spillCfg(t.TempDir(), shards), g)
	require.NoError(t, err)
	defer func() {
		g.release()
		require.NoError(t, s.Shutdown(context.Background()))
	}()
	var wg sync.WaitGroup
	var longest atomic.Int64
	stop := time.Now().Add(300 * time.Millisecond)
	wg.Go(func() {
		for time.Now().Before(stop) {
			t0 := time.Now()
			time.Sleep(time.Millisecond)
			if d := int64(time.Since(t0) - time.Millisecond); d > longest.Load() {
				longest.Store(d)
			}
		}
	})
	pushed := make([]int, producers)
	var shed atomic.Uint64
	for p := range producers {
		wg.Go(func() {
			h := s.HandleFor(uint64(p))
			for time.Now().Before(stop) {
				if h.Push(producerValue(p, pushed[p])) {
					pushed[p]++
				} else {
					shed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	st := s.Stats()
	require.Equal(t, shed.Load(), st.Dropped)
	require.Equal(t, st.Dropped, st.DroppedForSlots(), "shed for another reason than a full ring: %+v", st)
	require.Positive(t, st.HandOffs, "no push parked: the test shows nothing")
	g.release()
	flush(t, s)
	next := make([]int, producers)
	for _, v := range g.values() {
		p, seq := int(v>>32), int(uint32(v))
		require.Equal(t, next[p], seq, "producer %d: value %d came after %d", p, seq, next[p]-1)
		next[p]++
	}
	require.Equal(t, pushed, next, "values delivered per producer")
	total := int(st.Dropped)
	for _, n := range pushed {
		total += n
	}
	requireAccounted(t, s.Stats(), uint64(total))
	return st.Dropped, time.Duration(longest.Load())
}

// A segment that cannot be read does not stop its shard (issue 64, item
// 12): while Drain stalls, the segment the spiller writes gives way to a
// directory (the spiller goes on writing the file it has open; the
// reader, which opens the segment by name, cannot read it). Once Drain
// comes back, the reader gives the segment up: its values are counted
// lost when that happens, once, in SpillLost and DroppedForDisk, the
// failure in SpillErrors (not as a corrupt segment), and the worker goes
// on with the ring: Flush returns, every value pushed is delivered or
// counted, in order. Before, the read failed at every burst, the worker
// never reached the ring, and Flush waited out its ctx.
func TestASegmentThatCannotBeReadDoesNotStopTheShard(t *testing.T) {
	dir := t.TempDir()
	cfg := spillCfg(dir, 1)
	// The segment's records stay in the log's buffer until the reader
	// asks for them.
	cfg.Spill.SyncInterval = time.Hour
	g := newGate[uint64]()
	s := newSink(t, cfg, g)
	t.Cleanup(g.release) // before the sink's Shutdown, should the test fail
	h := s.Handle()
	var pushes uint64
	push := func(k int) {
		for range k {
			require.True(t, h.Push(pushes), "value %d", pushes)
			pushes++
		}
	}
	push(1)
	g.waitEntered(t)
	push(300) // the ring's 64, and the rest for the tier
	eventually(t, func() bool { return s.Stats().Spilled >= 300-64 }, "the stalled Drain made the ring spill")
	files, _ := segmentFiles(t, dir)
	require.Len(t, files, 1)
	require.NoError(t, os.Rename(files[0], files[0]+".gone"))
	require.NoError(t, os.Mkdir(files[0], 0o700))
	g.release()
	flush(t, s)
	st := s.Stats()
	require.Positive(t, st.SpillLost, "nothing lost: the segment was read (%+v)", st)
	require.Positive(t, st.SpillErrors)
	require.Zero(t, st.SpillCorrupt, "a segment that could not be read counted as corrupt")
	push(1000) // through the ring and the tier, as before
	flush(t, s)
	st = s.Stats()
	requireAccounted(t, st, pushes)
	require.Equal(t, st.SpillLost, st.Dropped, "dropped for another reason than the segment")
	got := g.values()
	require.Equal(t, pushes, uint64(len(got))+st.SpillLost)
	for i := 1; i < len(got); i++ {
		require.Less(t, got[i-1], got[i], "in order")
	}
	require.Equal(t, pushes-1, got[len(got)-1], "the last value pushed")
}
