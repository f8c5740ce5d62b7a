package main

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardedsink/shardedsink/sink"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRunDeliversEveryAcceptedEvent(t *testing.T) {
	for _, ack := range []bool{true, false} {
		res, err := run(context.Background(), options{
			subject: "test.events", stream: "TEST", ack: ack,
			producers: 32, events: 3000, timeout: 5 * time.Second,
		})
		require.NoError(t, err, "ack=%v", ack)
		require.Equal(t, 32*3000, res.Accepted+int(res.Dropped), "ack=%v: accepted + dropped = pushed", ack)
		require.Equal(t, uint64(res.Accepted), res.Received, "ack=%v: the subscriber got every accepted event", ack)
		require.Equal(t, uint64(res.Accepted), res.Bridge.PublishedEvents)
		require.Zero(t, res.Bridge.FailedBatches)
	}
}

// -max-delay reaches the sink: with it every accepted event is still
// delivered (Shutdown does not wait for it), and a negative one is refused
// by name.
func TestRunWithMaxDelay(t *testing.T) {
	res, err := run(context.Background(), options{
		subject: "test.delay", stream: "TESTDELAY", ack: true,
		producers: 4, events: 500, timeout: 5 * time.Second, maxDelay: 50 * time.Millisecond,
	})
	require.NoError(t, err)
	require.Equal(t, uint64(res.Accepted), res.Received)
	require.Equal(t, uint64(res.Accepted), res.Bridge.PublishedEvents)

	_, err = run(context.Background(), options{
		subject: "test.delay", stream: "TESTDELAY", ack: true,
		producers: 1, events: 1, timeout: time.Second, maxDelay: -time.Second,
	})
	require.ErrorContains(t, err, "MaxDelay = -1s")
}

// fixture is an embedded server, a connection, the stream and a counting
// subscriber.
type fixture struct {
	stop     func()
	bridge   *Bridge
	received *atomic.Uint64
}

func newFixture(t *testing.T, subject string, timeout time.Duration) *fixture {
	t.Helper()
	srv, err := startServer(t.TempDir())
	require.NoError(t, err)
	var once sync.Once
	stop := func() { once.Do(func() { srv.Shutdown(); srv.WaitForShutdown() }) }
	t.Cleanup(stop)
	nc, err := connect(srv.ClientURL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	require.NoError(t, ensureStream(context.Background(), nc, "TEST", subject))
	var received atomic.Uint64
	_, err = subscribe(nc, subject, &received)
	require.NoError(t, err)
	b, err := NewBridge(nc, Config{Subject: subject, Ack: true, Timeout: timeout})
	require.NoError(t, err)
	return &fixture{stop: stop, bridge: b, received: &received}
}

// pushAll pushes events events from each of producers goroutines and
// returns how many the sink accepted.
func pushAll(s *sink.Sink[Event], producers, events int) uint64 {
	return uint64(push(s, producers, events))
}

func TestServerStoppedMidRunGivesCountedFailuresNotAHang(t *testing.T) {
	f := newFixture(t, "test.stop", 500*time.Millisecond)
	s, err := sink.New(sink.Config[Event]{Shards: 4, RingCapacity: 1024, BatchSize: 64}, f.bridge)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// First half: the server is up, and everything accepted is acked.
	before := pushAll(s, 16, 500)
	require.NoError(t, s.Flush(ctx))
	require.Equal(t, before, f.bridge.Stats().PublishedEvents)

	// The server goes away mid-run; the producers go on.
	f.stop()
	after := pushAll(s, 16, 500)
	require.Positive(t, after)

	start := time.Now()
	require.NoError(t, s.Shutdown(ctx), "Shutdown finished in bounded time")
	took := time.Since(start)
	st := f.bridge.Stats()
	t.Logf("shutdown took %v; %+v; accepted %d before the stop, %d after", took, st, before, after)
	require.Less(t, took, 10*time.Second, "each batch is bounded by the bridge's 500 ms timeout, and most fail at once")
	require.Equal(t, before, st.PublishedEvents, "nothing is acked after the stop")
	require.Equal(t, after, st.FailedEvents, "every event accepted after the stop is counted as failed")
	require.Positive(t, st.FailedBatches)
	require.NotEmpty(t, st.LastError)
	require.Equal(t, st.PublishedEvents, f.received.Load(), "every acked event reached the subscriber")
}

func TestNewBridgeNamesEveryBadField(t *testing.T) {
	_, err := NewBridge(nil, Config{Timeout: -time.Second})
	require.ErrorIs(t, err, ErrInvalidConfig)
	for _, want := range []string{"nc = nil", `Subject = ""`, "Timeout = -1s"} {
		require.Contains(t, err.Error(), want)
	}
}

func TestDrainHonoursItsContext(t *testing.T) {
	f := newFixture(t, "test.ctx", 5*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f.bridge.Drain(ctx, []Event{{Seq: 1}, {Seq: 2}})
	st := f.bridge.Stats()
	require.Equal(t, uint64(1), st.FailedBatches)
	require.Equal(t, uint64(2), st.FailedEvents)
	require.Zero(t, st.PublishedBatches)
}
