package engine

import (
	"context"
	"sync"
	"testing"
	"time"
)

// stalledWriter blocks every Write until release: a stalled pipe.
type stalledWriter struct {
	once sync.Once
	gate chan struct{}
}

func (s *stalledWriter) Write(p []byte) (int, error) {
	<-s.gate
	return len(p), nil
}

func (s *stalledWriter) release() { s.once.Do(func() { close(s.gate) }) }

// flood writes line through w from a goroutine until stop is closed, and
// returns a channel closed once it has returned.
func flood(w *Writer, line []byte, stop <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				w.Write(line)
			}
		}
	}()
	return done
}

// While records are parked for room behind a Write that has run past
// SlowDrain (a spill directory takes them), a caller that runs yields
// its processor (one per parkedYieldEvery), so that they get one.
func TestACallerYieldsWhileRecordsWaitForTheSpillTier(t *testing.T) {
	dst := &stalledWriter{gate: make(chan struct{})}
	w, err := New(dst, defaults(Settings{Shards: 1, RingCapacity: 64, BatchSize: 16, SpillDir: t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(context.Background())
	defer dst.release()
	line := []byte(`{"msg":"stalled"}` + "\n")
	stop := make(chan struct{})
	done := flood(w, line, stop)
	defer func() { close(stop); dst.release(); <-done }()
	for deadline := time.Now().Add(10 * time.Second); w.parkedYields.Last() == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("no caller yielded while records were parked for the spill tier (spilled %d)", w.Counts().Spilled)
		}
		w.Write(line)
	}
}
