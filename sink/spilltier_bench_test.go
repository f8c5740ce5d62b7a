package sink_test

import (
	"context"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardedsink/shardedsink/internal/cputime"
	"github.com/shardedsink/shardedsink/sink"
)

// BenchmarkSpill measures the spill tier with 200-byte []byte values:
//
//   - healthy/tier=off and tier=on: producers (RunParallel) push into a
//     sink whose Drain returns at once, and the run ends once every value
//     is drained: ns per push and the share dropped. The tier should cost
//     nothing here: nothing spills.
//
//   - paced/tier=off and tier=on: one goroutine pushes 100,000 values a
//     second into the same sink, which leaves the cores mostly idle: the
//     process's CPU per value (cpu-ns/value: the producer's, the
//     workers' and the spiller's), what the tier costs a sink that does
//     not saturate the machine. Skipped where the process's CPU time
//     cannot be read.
//
//   - stalled: one producer pushes while Drain stalls, so every value but
//     the first batch goes to disk through the spiller (the push parks
//     while it takes): ns and MB/s per spilled value.
//
//   - replay: the same values, then Drain comes back: ns and MB/s per
//     value read back from disk and handed to Drain (from the release to
//     Flush's return).
//
// BenchmarkDisk (Linux) measures the disk under the same temporary
// directory without the sink, in the same run:
//
//	go test -run '^$' -bench '^Benchmark(Spill|Disk)$' -count 10 ./sink/
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
	for _, tier := range []string{"off", "on"} {
		b.Run("paced/tier="+tier, func(b *testing.B) {
			cfg := sink.Config[[]byte]{Logger: quiet}
			if tier == "on" {
				cfg.Spill = sink.Spill[[]byte]{Dir: b.TempDir(), MaxBytes: 1 << 30, Codec: sink.BytesCodec{}}
			}
			s, err := sink.New(cfg, sink.ActionFunc[[]byte](func(context.Context, [][]byte) {}))
			if err != nil {
				b.Fatal(err)
			}
			defer shutdownBench(b, s)
			h := s.Handle()
			for b.Loop() {
				cpu := pacedCPU(b, func() {
					for range pacedPerTick {
						h.Push(value)
					}
				})
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(pacedTicks*pacedPerTick), "cpu-ns/value")
			}
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

// BenchmarkSpillReplayHeap spills 1 GiB of 200-byte values (5,368,709 of
// them) through a stalled Drain, then lets Drain read them back, and
// reports the Go heap's peak over the whole run, sampled every 5 ms
// (runtime/metrics, live heap objects): the backlog is read 256 KiB at a
// time, never a whole segment.
//
//	go test -run '^$' -bench '^BenchmarkSpillReplayHeap$' -benchtime 1x ./sink/
func BenchmarkSpillReplayHeap(b *testing.B) {
	const total = 1 << 30
	value := make([]byte, 200)
	n := total / len(value)
	for b.Loop() {
		var peak atomic.Uint64
		stop := sampleHeap(&peak)
		release := make(chan struct{})
		var drained atomic.Int64
		s, err := sink.New(sink.Config[[]byte]{
			Shards:          1,
			Logger:          quiet,
			DisableStealing: true,
			Spill:           sink.Spill[[]byte]{Dir: b.TempDir(), MaxBytes: 2 << 30, Codec: sink.BytesCodec{}},
		}, sink.ActionFunc[[]byte](func(_ context.Context, batch [][]byte) {
			<-release
			drained.Add(int64(len(batch)))
		}))
		if err != nil {
			b.Fatal(err)
		}
		h := s.Handle()
		for range n {
			for !h.Push(value) {
			}
		}
		spilled := s.Stats().SpillBytes
		close(release)
		if err := s.Flush(context.Background()); err != nil {
			b.Fatal(err)
		}
		stop()
		st := s.Stats()
		shutdownBench(b, s)
		if st.Dropped != 0 || drained.Load() != int64(n) {
			b.Fatalf("dropped %d, drained %d of %d", st.Dropped, drained.Load(), n)
		}
		b.ReportMetric(float64(spilled)/(1<<20), "spilled-MiB")
		b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
	}
}

// sampleHeap records the largest live heap seen in peak, every 5 ms,
// until the returned stop is called.
func sampleHeap(peak *atomic.Uint64) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-exited }
}

// The paced rows: 100 values every 1 ms from one goroutine (100,000 a
// second), for 2 s.
const (
	pacedPerTick = 100
	pacedTicks   = 2000
)

// pacedCPU calls push every millisecond, pacedTicks times, and returns the
// process's CPU time over the run: what a sink costs at a steady rate that
// leaves the cores mostly idle.
func pacedCPU(b *testing.B, push func()) time.Duration {
	cpu0, err := cputime.Process()
	if err != nil {
		b.Skip(err)
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for range pacedTicks {
		<-tick.C
		push()
	}
	cpu1, err := cputime.Process()
	if err != nil {
		b.Fatal(err)
	}
	return cpu1 - cpu0
}
