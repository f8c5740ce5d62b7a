package natssink

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/sink"
)

// drainRound publishes a batch through the sink's Drain, then settles
// every slot with the ack the stream would send: one turn of the drain
// path, less the client's receipt of the acks (nats.go allocates a
// message per ack it reads; that cost is the same for any JetStream
// publisher, and BenchmarkProducers counts it).
func drainRound(s *Sink[int], batch []int, ack []byte) {
	s.drain(context.Background(), batch)
	s.slots.each(func(_ int32, sl *slot) {
		sl.mu.Lock()
		// A view of the slot's buffer (see slot.name), which nothing
		// rewrites before onAck has read it: no drain runs meanwhile.
		reply := sl.reply
		sl.mu.Unlock()
		if reply != "" {
			s.onAck(reply, "", ack)
		}
	})
}

// drainPathAllocs returns the allocations per value of drainRound on a
// connection to a blackhole server.
func drainPathAllocs(t testing.TB) float64 {
	_, js := connectBlackhole(t)
	s, err := New(js, Config[int]{Subject: "values", Encode: encodeInt, MaxInFlight: 512, AckTimeout: time.Hour, SkipStreamCheck: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	batch := make([]int, 256)
	for i := range batch {
		batch[i] = 1_000_000 + i
	}
	ack := []byte(okAck)
	drainRound(s, batch, ack) // grows the slots' payload buffers
	return testing.AllocsPerRun(50, func() { drainRound(s, batch, ack) }) / float64(len(batch))
}

// The drain path allocates at most twice per value: nats.go's PublishMsg
// allocates a bytes.Buffer and its bytes for the header; the sink itself
// allocates nothing per value.
func TestTheDrainPathAllocatesAtMostTwicePerValue(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocations")
	}
	allocs := drainPathAllocs(t)
	t.Logf("%.2f allocations per value", allocs)
	require.LessOrEqual(t, allocs, 2.0)
}

// BenchmarkDrainPath measures the drain path per value (ns/op, allocs/op):
// a Drain of 256 values to a blackhole server and the settling of their
// acks, as TestTheDrainPathAllocatesAtMostTwicePerValue does.
//
//	go test -run '^$' -bench DrainPath -benchtime 200000x ./natssink
func BenchmarkDrainPath(b *testing.B) {
	_, js := connectBlackhole(b)
	s, err := New(js, Config[int]{Subject: "values", Encode: encodeInt, MaxInFlight: 512, AckTimeout: time.Hour, SkipStreamCheck: true})
	require.NoError(b, err)
	defer func() { require.NoError(b, s.Shutdown(context.Background())) }()
	batch := make([]int, 256)
	for i := range batch {
		batch[i] = 1_000_000 + i
	}
	ack := []byte(okAck)
	drainRound(s, batch, ack)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += len(batch) {
		drainRound(s, batch[:min(len(batch), b.N-done)], ack)
	}
}

// ReadStats writes every field (a Stats full of other values reads the
// same as a fresh one), and reading into the same Stats again allocates
// nothing, LastError included: its text is made once per failure.
func TestReadStatsWritesEveryFieldAndAllocatesNothingOnceFilled(t *testing.T) {
	_, js := connectBlackhole(t)
	s, err := New(js, Config[int]{Subject: "values", Encode: encodeInt, MaxInFlight: 512, AckTimeout: time.Hour, SkipStreamCheck: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	batch := []int{1, 2, 3}
	drainRound(s, batch, []byte(okAck))
	s.reporter.record(1, ErrEncodePanicked)

	want := s.Stats()
	require.Equal(t, ErrEncodePanicked.Error(), want.LastError)
	st := Stats{Name: "other", Pushed: 7, Dropped: 7, WaitedOut: 7, Queued: 7, InFlight: 7, InFlightBytes: 7,
		Acked: 7, Duplicates: 7, Failed: 7, Retried: 7, LastError: "stale"}
	st.Rings.Drained, st.Rings.Dropped = 7, 7
	s.ReadStats(&st)
	require.Equal(t, want, st)

	require.Zero(t, testing.AllocsPerRun(100, func() { s.ReadStats(&st) }))
	s.reporter.record(1, ErrShutdown)
	s.ReadStats(&st)
	require.Equal(t, ErrShutdown.Error(), st.LastError)
}

// BenchmarkStats is a snapshot of a sink of 64 shards: Stats, which
// allocates the per-shard slice, and ReadStats into a kept Stats, as the
// natsprom and natsmetric collectors read.
func BenchmarkStats(b *testing.B) {
	_, js := connectBlackhole(b)
	s, err := New(js, Config[int]{Subject: "values", Encode: encodeInt, SkipStreamCheck: true, Sink: sink.Config[int]{Shards: 64}})
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, s.Shutdown(context.Background())) })
	s.reporter.record(1, ErrEncodePanicked) // a LastError to read
	b.Run("call=Stats", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = s.Stats()
		}
	})
	b.Run("call=ReadStats", func(b *testing.B) {
		var st Stats
		b.ReportAllocs()
		for b.Loop() {
			s.ReadStats(&st)
		}
	})
}
