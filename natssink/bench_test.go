package natssink_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/cputime"
	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/sink"
)

// benchProducers is the number of producer goroutines of
// BenchmarkProducers, the setting.
const benchProducers = 64

// BenchmarkProducers measures b.N values of about 195 bytes handed to
// JetStream by 64 producer goroutines, on an embedded server with a memory
// stream, three ways:
//
//   - natssink: the producers Push into a Sink, whose drain workers publish
//     asynchronously, one message per value (the stream has no
//     allow_batched). Its rings hold the whole run (RingCapacity sized to
//     b.N), so that every value is delivered; natssink-default-rings keeps
//     the default 8192 values per shard, and sheds what they cannot hold.
//     natssink-fastbatch is natssink on a stream with allow_batched and
//     FastBatchesAuto: the workers publish through fast batches. The
//     -b1024 rows take batches of 1,024 values (Sink.BatchSize) instead
//     of the default 256.
//   - publish: each producer calls js.Publish and waits for the ack.
//   - publishasync: each producer calls js.PublishAsync (default pending
//     limit, 4000) and, when it refuses (too many stalled), waits on
//     js.PublishAsyncComplete and tries again. publishasync-msgid adds a
//     Nats-Msg-Id to each message (jetstream.WithMsgID), as natssink does,
//     so that the server does the same work (the duplicate window's
//     bookkeeping) for both.
//
// Reported: acked/s, the values acked per second from the release of the
// producers until the last ack; cpu-ns/acked, the CPU time of the whole
// process (server, client, producers) per value acked, which depends less
// on what else runs on the machine than acked/s does; p99-ns and p999-ns,
// the latency of one producer call (Push, Publish or PublishAsync);
// drop-%; and allocs/op,
// which counts every allocation in the process during the run (the
// server's and the client's reading of acks too) per value. The drain
// path alone is BenchmarkDrainPath (and TestTheDrainPathAllocates...).
//
//	go test -run '^$' -bench Producers -benchtime 200000x -count 1 ./natssink
func BenchmarkProducers(b *testing.B) {
	b.Run("impl=natssink", func(b *testing.B) { benchSink(b, true, false, 0) })
	b.Run("impl=natssink-fastbatch", func(b *testing.B) { benchSink(b, true, true, 0) })
	b.Run("impl=natssink-b1024", func(b *testing.B) { benchSink(b, true, false, 1024) })
	b.Run("impl=natssink-fastbatch-b1024", func(b *testing.B) { benchSink(b, true, true, 1024) })
	b.Run("impl=natssink-default-rings", func(b *testing.B) { benchSink(b, false, false, 0) })
	b.Run("impl=publish", benchPublish)
	b.Run("impl=publishasync", func(b *testing.B) { benchPublishAsync(b, false) })
	b.Run("impl=publishasync-msgid", func(b *testing.B) { benchPublishAsync(b, true) })
}

// benchRun is one run's setting: an embedded server, a memory stream, and
// per producer a share of b.N and a slot per call for its latency.
type benchRun struct {
	js      jetstream.JetStream
	stream  jetstream.Stream
	share   []int     // values per producer, summing to b.N
	lat     [][]int64 // per producer, per call: ns
	release chan struct{}
	wg      sync.WaitGroup
	start   time.Time
	cpu     time.Duration // the process's CPU time at the start
}

func newBenchRun(b *testing.B) *benchRun { return newBenchRunOn(b, false) }

// newBenchRunOn is newBenchRun with a stream that allows fast batches
// when batched is set.
func newBenchRunOn(b *testing.B, batched bool) *benchRun {
	b.Helper()
	b.StopTimer()
	srv := embeddedServer(b)
	r := &benchRun{js: srv.JetStream, release: make(chan struct{})}
	srv.Conn.SetErrorHandler(func(*nats.Conn, *nats.Subscription, error) {})
	if batched {
		r.stream = batchedStream(b, srv.JetStream, "BENCH", "bench")
	} else {
		r.stream = stream(b, srv.JetStream, "BENCH", "bench")
	}
	r.share = make([]int, benchProducers)
	r.lat = make([][]int64, benchProducers)
	for p := range r.share {
		r.share[p] = b.N / benchProducers
		if p < b.N%benchProducers {
			r.share[p]++
		}
		r.lat[p] = make([]int64, r.share[p])
	}
	return r
}

// produce starts the producers, each calling call for its share, timing
// every call, and releases them together.
func (r *benchRun) produce(b *testing.B, call func(p, i int)) {
	var ready sync.WaitGroup
	for p := range benchProducers {
		ready.Add(1)
		r.wg.Go(func() {
			lat := r.lat[p]
			ready.Done()
			<-r.release
			for i := range lat {
				t0 := time.Now()
				call(p, i)
				lat[i] = int64(time.Since(t0))
			}
		})
	}
	ready.Wait()
	b.ResetTimer()
	b.StartTimer()
	r.start = time.Now()
	r.cpu, _ = cputime.Process()
	close(r.release)
}

// report stops the timer and reports the run's figures.
func (r *benchRun) report(b *testing.B, acked, dropped uint64) {
	elapsed := time.Since(r.start)
	cpu, cpuErr := cputime.Process()
	b.StopTimer()
	all := make([]int64, 0, b.N)
	for _, l := range r.lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	at := func(q float64) float64 { return float64(all[min(len(all)-1, int(q*float64(len(all))))]) }
	b.ReportMetric(float64(acked)/elapsed.Seconds(), "acked/s")
	b.ReportMetric(at(0.99), "p99-ns")
	b.ReportMetric(at(0.999), "p999-ns")
	b.ReportMetric(100*float64(dropped)/float64(b.N), "drop-%")
	if cpuErr == nil && acked > 0 {
		b.ReportMetric(float64(cpu-r.cpu)/float64(acked), "cpu-ns/acked")
	}
	info, err := r.stream.Info(context.Background())
	require.NoError(b, err)
	require.Equal(b, acked, info.State.Msgs, "the stream holds the acked values")
}

func benchSink(b *testing.B, burstRings, batched bool, batchSize int) {
	b.ReportAllocs()
	r := newBenchRunOn(b, batched)
	cfg := natssink.Config[event]{Subject: "bench", Encode: encodeEvent, Sink: sink.Config[event]{Logger: quiet}}
	if batched {
		cfg.FastBatches = natssink.FastBatchesAuto
	}
	cfg.Sink.BatchSize = batchSize
	if burstRings {
		// Every value fits in any one ring: the stack homes of the
		// producers need not spread them evenly.
		cfg.Sink.RingCapacity = min(sink.MaxRingCapacity, b.N+sink.DefaultRingCapacity)
	}
	s, err := natssink.New(r.js, cfg)
	require.NoError(b, err)
	r.produce(b, func(p, i int) { s.Push(event{Producer: p, Seq: i}) })
	r.wg.Wait()
	require.NoError(b, s.Flush(context.Background()))
	st := s.Stats()
	r.report(b, st.Acked, st.Dropped)
	require.NoError(b, s.Shutdown(context.Background()))
	require.Zero(b, st.Failed)
	if batched {
		require.Equal(b, st.Acked, st.Batched, "every value acked by a fast batch")
	}
}

func benchPublish(b *testing.B) {
	b.ReportAllocs()
	r := newBenchRun(b)
	bufs := make([][]byte, benchProducers)
	var failed atomic.Uint64
	ctx := context.Background()
	r.produce(b, func(p, i int) {
		bufs[p], _ = encodeEvent(bufs[p][:0], event{Producer: p, Seq: i})
		if _, err := r.js.Publish(ctx, "bench", bufs[p]); err != nil {
			failed.Add(1)
		}
	})
	r.wg.Wait()
	r.report(b, uint64(b.N)-failed.Load(), 0)
	require.Zero(b, failed.Load())
}

func benchPublishAsync(b *testing.B, withMsgID bool) {
	b.ReportAllocs()
	r := newBenchRun(b)
	var failed atomic.Uint64
	// A JetStream context of its own, for the error handler; on the
	// embedded server's connection, as the other rows.
	js, err := jetstream.New(r.js.Conn(), jetstream.WithPublishAsyncErrHandler(func(jetstream.JetStream, *nats.Msg, error) {
		failed.Add(1)
	}))
	require.NoError(b, err)
	prefixes := make([]string, benchProducers)
	for p := range prefixes {
		prefixes[p] = nats.NewInbox() + "." + strconv.Itoa(p) + "."
	}
	r.produce(b, func(p, i int) {
		// A fresh payload per call: the client keeps the message until its
		// ack, to publish it again after a "no responders".
		payload, _ := encodeEvent(make([]byte, 0, 256), event{Producer: p, Seq: i})
		var opts []jetstream.PublishOpt
		if withMsgID {
			opts = append(opts, jetstream.WithMsgID(prefixes[p]+strconv.Itoa(i)))
		}
		for {
			_, err := js.PublishAsync("bench", payload, opts...)
			if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
				if err != nil {
					failed.Add(1)
				}
				return
			}
			<-js.PublishAsyncComplete()
		}
	})
	r.wg.Wait()
	<-js.PublishAsyncComplete()
	r.report(b, uint64(b.N)-failed.Load(), 0)
	require.Zero(b, failed.Load())
}
