package sink_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardedsink/shardedsink/sink"
)

// BenchmarkSpill measures the spill tier with 200-byte []byte values:
//
//   - healthy/tier=off and tier=on: producers (RunParallel) push into a
//     sink whose Drain returns at once, and the run ends once every value
//     is drained: ns per push and the share dropped. The tier should cost
//     nothing here: nothing spills.
//
//   - stalled: one producer pushes while Drain stalls, so every value but
//     the first batch goes to disk through the spiller (the push parks
//     while it takes): ns and MB/s per spilled value.
//
//   - replay: the same values, then Drain comes back: ns and MB/s per
//     value read back from disk and handed to Drain (from the release to
//     Flush's return).
//
//     go test -run '^$' -bench '^BenchmarkSpill$' -count 10 ./sink/
func BenchmarkSpill(b *testing.B) {
	value := make([]byte, 200)
	for _, tier := range []string{"off", "on"} {
		b.Run("healthy/tier="+tier, func(b *testing.B) {
			cfg := sink.Config[[]byte]{Logger: quiet}
			if tier == "on" {
				cfg.Spill = sink.Spill[[]byte]{Dir: b.TempDir(), MaxBytes: 1 << 30, Codec: sink.BytesCodec{}}
			}
			var drained atomic.Int64
			s, err := sink.New(cfg, sink.ActionFunc[[]byte](func(_ context.Context, batch [][]byte) {
				drained.Add(int64(len(batch)))
			}))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(value)))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					s.Push(value)
				}
			})
			if err := s.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			st := s.Stats()
			b.ReportMetric(100*float64(st.Dropped)/float64(b.N), "dropped%")
			b.ReportMetric(float64(st.Spilled)/float64(b.N), "spilled/op")
			shutdownBench(b, s)
		})
	}
	for _, phase := range []string{"stalled", "replay"} {
		b.Run(phase, func(b *testing.B) {
			release := make(chan struct{})
			s, err := sink.New(sink.Config[[]byte]{
				Shards:          1,
				Logger:          quiet,
				DisableStealing: true,
				Spill:           sink.Spill[[]byte]{Dir: b.TempDir(), MaxBytes: 8 << 30, Codec: sink.BytesCodec{}},
			}, sink.ActionFunc[[]byte](func(context.Context, [][]byte) { <-release }))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(value)))
			h := s.Handle()
			if phase == "replay" {
				b.StopTimer()
			}
			for range b.N {
				for !h.Push(value) {
				}
			}
			// Every value but the held batch and less than half a ring
			// is on disk.
			if phase == "replay" {
				b.StartTimer()
			} else {
				b.StopTimer()
			}
			close(release)
			if err := s.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			st := s.Stats()
			if st.Dropped != 0 {
				b.Fatalf("%d dropped", st.Dropped)
			}
			b.ReportMetric(float64(st.Spilled)/float64(b.N), "spilled/op")
			shutdownBench(b, s)
		})
	}
}

func shutdownBench[T any](b *testing.B, s *sink.Sink[T]) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		b.Fatal(err)
	}
}
