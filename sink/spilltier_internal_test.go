package sink

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// With the hand-off on, a healthy Drain call leaves a sleeping spiller
// asleep: only a push that parks (or, with the hand-off off, a Drain call
// that begins) rings it, so a spill tier costs a healthy sink nothing
// per Drain call. With the hand-off off the same call wakes it.
func TestADrainCallWakesTheSpillerOnlyWithTheHandOffOff(t *testing.T) {
	for _, off := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			entered, release := make(chan struct{}), make(chan struct{})
			s, err := New(Config[[]byte]{
				Shards:         1,
				Logger:         slog.New(slog.DiscardHandler),
				DisableHandOff: off,
				Spill:          Spill[[]byte]{Dir: t.TempDir(), MaxBytes: 8 << 20, Codec: BytesCodec{}},
			}, ActionFunc[[]byte](func(context.Context, [][]byte) {
				entered <- struct{}{}
				<-release
			}))
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second) // past spillLinger: the spiller sleeps
			synctest.Wait()
			if s.spill.sleeping.Load() == 0 {
				t.Fatal("the spiller of an idle sink is not asleep")
			}
			s.Push([]byte("x"))
			<-entered
			synctest.Wait()
			if asleep := s.spill.sleeping.Load() != 0; asleep == off {
				t.Fatalf("hand-off off %v: the spiller asleep %v during a young Drain call", off, asleep)
			}
			close(release)
			if err := s.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The files of the segments a worker finished are removed off the
// worker, with no shard's mutex held: an unlink takes the file system
// milliseconds (traced at 18.6 ms for a 64 MiB segment), and under the
// shard's mutex it stopped the spiller, and every push parked on it, for
// that long. Here Drain stalls until the tier holds several 64 KiB
// segments; once it runs again, the first removal waits in the hook
// until the worker has handed Drain more values, which a worker that
// removes them itself, or waits for a mutex the remover holds, cannot.
func TestTheTierRemovesSpentSegmentsOffTheWorker(t *testing.T) {
	release := make(chan struct{})
	var got atomic.Int64
	const n = 300
	checked, stuck := false, false
	var exp experiments
	exp.reclaimHook = func(int) {
		before := got.Load()
		if checked || before == n {
			return // checked once already, or Flush's call
		}
		checked = true
		for deadline := time.Now().Add(5 * time.Second); got.Load() == before; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				stuck = true
				return
			}
		}
	}
	s, err := newTuned(Config[[]byte]{
		Shards:       1,
		RingCapacity: 64,
		BatchSize:    16, // a segment is done after 4 batches, 15 are left
		Logger:       slog.New(slog.DiscardHandler),
		// 8 segments of 64 KiB: the 300 values of 1 KiB fill 4 or 5.
		Spill: Spill[[]byte]{Dir: t.TempDir(), MaxBytes: 8 * MinSpillShardBytes, Codec: BytesCodec{}},
	}, ActionFunc[[]byte](func(_ context.Context, b [][]byte) {
		<-release
		time.Sleep(200 * time.Microsecond) // the remover's runway
		got.Add(int64(len(b)))
	}), exp, false)
	if err != nil {
		t.Fatal(err)
	}
	v := make([]byte, 1000)
	for range n {
		if err := s.PushWait(context.Background(), v); err != nil {
			t.Fatal(err)
		}
	}
	if segs := s.spill.shards[0].own.Stats().Segments; segs < 3 {
		t.Fatalf("the tier holds %d segments, want at least 3", segs)
	}
	close(release)
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.SpillBytes >= MinSpillShardBytes {
		t.Fatalf("after Flush the tier holds %d bytes, want at most the last segment's", st.SpillBytes)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got.Load() != n {
		t.Fatalf("Drain got %d values, want %d", got.Load(), n)
	}
	if !checked || stuck {
		t.Fatalf("a removal while values were left: %v; the worker stopped during it: %v", checked, stuck)
	}
}
