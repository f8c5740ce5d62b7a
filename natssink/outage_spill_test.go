package natssink_test

import (
	"context"
	"net"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/sink"
)

// startServerAt starts a nats-server with JetStream storing in dir, on
// 127.0.0.1:port (server.RANDOM_PORT for a port the system chooses).
func startServerAt(t testing.TB, port int, dir string) *server.Server {
	t.Helper()
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true,
	})
	require.NoError(t, err)
	srv.Start()
	require.True(t, srv.ReadyForConnections(10*time.Second))
	return srv
}

// The goal: a 20 s outage of the one server (stopped, then
// started again on its port and store) while producers push 20,000
// values/s, 400,000 values, more than the default MaxInFlight (262,144)
// and rings (2 x 8,192 here) hold, and within the default RetryBudget:
// with a spill directory and the default Config otherwise, none is
// dropped or failed, and the stream stores each once.
func TestATwentySecondOutageAt20000ValuesPerSecondLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("a 20 s outage")
	}
	if natssink.RaceEnabled {
		// Sized for the machine's speed: with the race detector the
		// in-process server acks the backlog too slowly for the default
		// RetryBudget (331,024 of 400,000 values failed in one run).
		t.Skip("a throughput test: the race detector slows the server below 20,000 values/s")
	}
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	srv := startServerAt(t, server.RANDOM_PORT, store)
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	port := srv.Addr().(*net.TCPAddr).Port
	nc, js, err := natssink.Connect(srv.ClientURL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "OUTAGE", Subjects: []string{"spill.x"}, Storage: jetstream.FileStorage,
	})
	require.NoError(t, err)
	s, err := natssink.New(js, natssink.Config[event]{
		Subject: "spill.x", Encode: encodeEvent, MsgIDOf: eventID,
		Sink: sink.Config[event]{
			Shards: 2, // as on a 2-core machine, whatever this one has
			Spill:  sink.Spill[event]{Dir: filepath.Join(dir, "spill"), MaxBytes: 1 << 30, Codec: eventCodec{}},
		},
	})
	require.NoError(t, err)

	var peak atomic.Uint64 // the Go heap in use (the server's included), sampled every 250 ms
	stopSampling := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stopSampling:
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	})
	stopSampler := sync.OnceFunc(func() { close(stopSampling); sampler.Wait() })
	defer stopSampler()

	srv.Shutdown()
	srv.WaitForShutdown()
	const rate, producers = 20000, 4
	const outage = 20 * time.Second
	const n = rate * int(outage/time.Second)
	start := time.Now()
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := 0; i < n/producers; time.Sleep(time.Millisecond) {
				due := min(int(time.Since(start)*rate/producers/time.Second), n/producers)
				for ; i < due; i++ {
					require.True(t, s.Push(event{Producer: p, Seq: i}), "value %d of producer %d dropped: %+v", i, p, s.Stats())
				}
			}
		})
	}
	wg.Wait()
	during := s.Stats()
	peakDown := peak.Load() // the sink's, the server being down (and its heap not yet collected)
	srv = startServerAt(t, port, store)
	back := time.Now()
	require.NoError(t, s.Shutdown(ctx))
	stopSampler() // the peak of the outage and its backlog, not of the reading below
	stats := s.Stats()
	t.Logf("outage %v, %d values; at its end: in flight %d, queued %d, spilled %d; all acked %v after it; retried %d, duplicates %d; peak heap in use %d MiB during the outage, %d MiB with the server back",
		back.Sub(start).Round(time.Millisecond), n, during.InFlight, during.Queued, during.Rings.Spilled,
		time.Since(back).Round(time.Millisecond), stats.Retried, stats.Duplicates, peakDown>>20, peak.Load()>>20)
	requireIdentity(t, stats, uint64(n))
	require.Equal(t, uint64(n), stats.Acked, "%+v", stats)
	require.Zero(t, stats.Dropped)
	require.Zero(t, stats.Failed)
	require.Positive(t, during.Rings.Spilled, "the outage outlasted what MaxInFlight and the rings hold")
	require.Len(t, requireStoredOnce(t, st), n)
}
