package sink

import (
	"context"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestWatermarkExperiment measures the share of pushed values that reach
// Drain under CPU-bound producers on GOMAXPROCS=2, with the worker yielding
// after every batch and with it yielding only once its ring is at most half
// full. It runs only with SINK_WATERMARK=1:
//
//	SINK_WATERMARK=1 go test -run TestWatermarkExperiment -v -count 1 ./sink/
func TestWatermarkExperiment(t *testing.T) {
	if os.Getenv("SINK_WATERMARK") == "" {
		t.Skip("set SINK_WATERMARK=1 to run the experiment")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for trial := range 4 {
		work := trial%2 == 1 // odd trials: producers work about 100 ns between pushes
		for _, wm := range []bool{false, true} {
			var drained atomic.Int64
			var sink atomic.Int64
			cfg := Config[int]{RingCapacity: 4096, OnOverload: func(Overload) {}}
			s, err := newTuned(cfg, ActionFunc[int](func(_ context.Context, b []int) {
				// An export that costs about 100 ns of CPU per value.
				x := int64(0)
				for _, v := range b {
					for i := range 60 {
						x += int64(v ^ i)
					}
				}
				sink.Add(x)
				drained.Add(int64(len(b)))
			}), experiments{watermark: wm}, false)
			if err != nil {
				t.Fatal(err)
			}
			var stop atomic.Bool
			var pushed atomic.Int64
			var wg sync.WaitGroup
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					n := int64(0)
					y := 0
					for !stop.Load() {
						s.Push(int(n))
						n++
						if work {
							for i := range 60 {
								y += i ^ int(n)
							}
						}
					}
					sink.Add(int64(y))
					pushed.Add(n)
				}()
			}
			time.Sleep(500 * time.Millisecond)
			stop.Store(true)
			wg.Wait()
			d := drained.Load()
			p := pushed.Load()
			if err := s.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Logf("trial %d producer-work=%v watermark=%v: pushed %d, drained during the burst %d (%.2f%%), dropped %d",
				trial, work, wm, p, d, 100*float64(d)/float64(p), s.Dropped())
		}
	}
}
