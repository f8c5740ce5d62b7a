package logsink_test

import (
	"bytes"
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/shardedsink/shardedsink/logsink"
)

// A flood of records of 64 KiB into a stalled destination, through the
// plain io.Writer from eight goroutines on Streams of their own: the heap
// in use after a GC stays within 96 MiB (the default MaxQueuedBytes of 64
// MiB, the slots and the runtime), and once the destination returns every
// record is written or dropped and counted.
func TestAFloodOfLargeRecordsIsBoundedInBytes(t *testing.T) {
	const goroutines = 8
	count := 4000
	if raceEnabled || testing.Short() {
		count = 256 // twice the budget; the race detector's shadow makes the flood slow
	}
	gate := make(chan struct{})
	dst := &lockedWriter{gate: gate}
	// KeepWait -1: the ERROR records are shed for bytes at once (a wait
	// for room would count them in WaitedOut instead; keepwait_test.go).
	w, err := logsink.New(dst, &logsink.Options{Buffering: logsink.Buffering{KeepWait: -1}})
	if err != nil {
		t.Fatal(err)
	}
	rec := append(bytes.Repeat([]byte("x"), 64<<10), '\n')
	var wg sync.WaitGroup
	for range goroutines {
		s := w.Stream()
		wg.Go(func() {
			for range count {
				_, _ = s.WriteLevel(8, rec) // ERROR: the reserve too fills
			}
		})
	}
	wg.Wait()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st := w.Stats()
	t.Logf("%d records of 64 KiB, destination stalled: heap in use %.1f MiB after GC, %d dropped (%d for bytes)",
		goroutines*count, float64(ms.HeapInuse)/(1<<20), st.Dropped, st.DroppedForBytes)
	if ms.HeapInuse > 96<<20 {
		t.Errorf("heap in use after GC, destination stalled: %.1f MiB, want at most 96", float64(ms.HeapInuse)/(1<<20))
	}
	if st.DroppedForBytes == 0 {
		t.Errorf("the flood is over the byte budget, but nothing was shed for bytes: %+v", st)
	}
	close(gate)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st = w.Stats()
	if st.Written+st.Dropped != uint64(goroutines*count) || st.Errors != 0 {
		t.Fatalf("Stats = %+v, want the %d records written or dropped", st, goroutines*count)
	}
}
