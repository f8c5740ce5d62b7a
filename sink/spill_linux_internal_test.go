package sink

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardedsink/shardedsink/internal/tmpfs"
	"github.com/shardedsink/shardedsink/sink/spill"
)

// The records that a Sync's failed write lost are counted once, however
// the worker's reads interleave with the Sync. A file size limit makes
// the syncer's write of the buffered records fail (EFBIG) while Drain
// stalls; once the Sync has returned, and before the syncer counts what
// it lost, Drain comes back and the worker reads the log to its end. Its
// end-of-file sweep counted those records as lost, and then the syncer
// added the WriteError's Lost: lost twice, the tier's backlog below zero
// (every run; the end-to-end form, TestRecordsThatAFailedSyncLostAreCountedOnce,
// needs the worker inside Sync's fsync).
func TestRecordsASyncLostAreCountedOnceWhenTheWorkerReadsToTheEnd(t *testing.T) {
	if !tmpfs.LimitFileSize(t, 64) { // a segment's magic and 3 records of 8 bytes
		return // the child process ran the test
	}
	release := make(chan struct{})
	var sp atomic.Pointer[Sink[[]byte]]
	var once sync.Once
	swept := make(chan bool, 1)
	var exp experiments
	exp.syncHook = func(i int, err error) {
		var we *spill.WriteError
		if !errors.As(err, &we) || we.Lost == 0 {
			return
		}
		once.Do(func() {
			s := sp.Load()
			close(release)
			deadline := time.Now().Add(5 * time.Second)
			for s.spill.shards[i].hasDisk.Load() && time.Now().Before(deadline) {
				time.Sleep(100 * time.Microsecond)
			}
			swept <- !s.spill.shards[i].hasDisk.Load()
		})
	}
	s, err := newTuned(Config[[]byte]{
		Shards:       1,
		RingCapacity: 64,
		BatchSize:    16,
		Logger:       slog.New(slog.DiscardHandler),
		Spill:        Spill[[]byte]{Dir: t.TempDir(), MaxBytes: 8 << 20, Codec: BytesCodec{}, SyncInterval: 5 * time.Millisecond},
	}, ActionFunc[[]byte](func(ctx context.Context, _ [][]byte) {
		select {
		case <-release:
		case <-ctx.Done():
		}
	}), exp, false)
	if err != nil {
		t.Fatal(err)
	}
	sp.Store(s)
	const pushes = 300
	for range pushes {
		s.Push(make([]byte, 8))
	}
	select {
	case ok := <-swept:
		if !ok {
			t.Fatal("the worker did not read the log to its end within 5 s")
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no sync lost records: %+v", s.Stats())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); s.Stats().SpillErrors == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the failed sync is not counted")
		}
	}
	st := s.Stats()
	if st.SpillLost == 0 || st.SpillLost > st.Spilled || st.SpillQueued != 0 ||
		st.Drained+uint64(st.Queued)+uint64(st.SpillQueued)+st.Dropped != pushes {
		t.Fatalf("spilled %d, spill-drained %d, lost %d, SpillQueued %d; Drained %d + Queued %d + SpillQueued %d + Dropped %d against %d pushes",
			st.Spilled, st.SpillDrained, st.SpillLost, st.SpillQueued, st.Drained, st.Queued, st.SpillQueued, st.Dropped, pushes)
	}
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
