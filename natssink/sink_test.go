package natssink_test

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/internal/allocs"
	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/sink"
)

// requireIdentity checks the accounting of a sink after a Shutdown that
// returned nil: every push is acked, failed or dropped.
func requireIdentity(t *testing.T, st natssink.Stats, pushed uint64) {
	t.Helper()
	require.Equal(t, pushed, st.Pushed, "Pushed counts every call of Push: %+v", st)
	require.Equal(t, st.Pushed, st.Acked+st.Failed+st.Dropped, "Acked + Failed + Dropped == Pushed: %+v", st)
	require.Zero(t, st.Queued, "%+v", st)
	require.Zero(t, st.InFlight, "%+v", st)
}

func TestEveryValueBecomesOneMessageWithItsOwnMsgID(t *testing.T) {
	srv := embeddedServer(t)
	st := stream(t, srv.JetStream, "EVENTS", "events.>")
	s, err := natssink.New(srv.JetStream, natssink.Config[event]{
		Subject: "events.test", Encode: encodeEvent,
		Sink: sink.Config[event]{RingCapacity: 1 << 14},
	})
	require.NoError(t, err)

	const producers, each = 8, 1000
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				require.True(t, s.Push(event{Producer: p, Seq: i}), "the rings hold every value")
			}
		})
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
	stats := s.Stats()
	requireIdentity(t, stats, producers*each)
	require.Equal(t, uint64(producers*each), stats.Acked)
	require.Zero(t, stats.Failed)

	msgs := readAll(t, st)
	require.Len(t, msgs, producers*each, "one message per value")
	ids := map[string]bool{}
	seen := map[event]bool{}
	var prefix string
	for _, m := range msgs {
		require.Equal(t, "events.test", m.Subject)
		require.NotEmpty(t, m.MsgID)
		require.False(t, ids[m.MsgID], "Nats-Msg-Id %s twice", m.MsgID)
		ids[m.MsgID] = true
		require.False(t, seen[m.Event], "%+v twice", m.Event)
		seen[m.Event] = true
		// The id is the sink's prefix and a sequence number.
		i := strings.LastIndexByte(m.MsgID, '.')
		require.Positive(t, i)
		if prefix == "" {
			prefix = m.MsgID[:i]
		}
		require.Equal(t, prefix, m.MsgID[:i], "one prefix per sink")
	}
}

func TestSubjectOfRoutesEachValueToItsSubject(t *testing.T) {
	srv := embeddedServer(t)
	st := stream(t, srv.JetStream, "ROUTED", "routed.>")
	s, err := natssink.New(srv.JetStream, natssink.Config[event]{
		SubjectOf: func(e event) string { return "routed.p" + strconv.Itoa(e.Producer) },
		Encode:    encodeEvent,
	})
	require.NoError(t, err)
	for p := range 3 {
		for i := range 10 {
			require.True(t, s.Push(event{Producer: p, Seq: i}))
		}
	}
	require.NoError(t, s.Shutdown(t.Context()))
	requireIdentity(t, s.Stats(), 30)
	for _, m := range readAll(t, st) {
		require.Equal(t, "routed.p"+strconv.Itoa(m.Event.Producer), m.Subject)
	}
}

func TestFlushReturnsOnceEveryValueIsAcked(t *testing.T) {
	srv := embeddedServer(t)
	st := stream(t, srv.JetStream, "FLUSHED", "flushed")
	s, err := natssink.New(srv.JetStream, natssink.Config[event]{Subject: "flushed", Encode: encodeEvent})
	require.NoError(t, err)
	defer s.Shutdown(context.Background())
	for round := range 3 {
		for i := range 500 {
			require.True(t, s.Push(event{Producer: round, Seq: i}))
		}
		require.NoError(t, s.Flush(t.Context()))
		stats := s.Stats()
		require.Equal(t, uint64(500*(round+1)), stats.Acked, "%+v", stats)
		info, err := st.Info(t.Context())
		require.NoError(t, err)
		require.Equal(t, stats.Acked, info.State.Msgs)
	}
}

func TestAValueNoStreamCapturesIsRetriedThenCountedAsFailed(t *testing.T) {
	srv := embeddedServer(t)
	var reports atomic.Pointer[error]
	s, err := natssink.New(srv.JetStream, natssink.Config[event]{
		Subject: "nobody.listens", Encode: encodeEvent, Attempts: 3, RetryBackoff: 10 * time.Millisecond,
		SkipStreamCheck: true, // New would refuse it
		OnError:         func(err error) { reports.Store(&err) },
	})
	require.NoError(t, err)
	for i := range 20 {
		require.True(t, s.Push(event{Seq: i}))
	}
	require.NoError(t, s.Shutdown(t.Context()))
	st := s.Stats()
	requireIdentity(t, st, 20)
	require.Equal(t, uint64(20), st.Failed)
	require.Equal(t, uint64(40), st.Retried, "two retries each")
	require.ErrorIs(t, *reports.Load(), jetstream.ErrNoStreamResponse)
	require.Contains(t, st.LastError, "after 3 attempt(s)")
}

func TestAValueTheStreamRefusesIsNotRetried(t *testing.T) {
	srv := embeddedServer(t)
	_, err := srv.JetStream.CreateStream(t.Context(), jetstream.StreamConfig{
		Name: "SMALL", Subjects: []string{"small"}, Storage: jetstream.MemoryStorage, MaxMsgSize: 100,
	})
	require.NoError(t, err)
	s, err := natssink.New(srv.JetStream, natssink.Config[event]{Subject: "small", Encode: encodeEvent})
	require.NoError(t, err)
	require.True(t, s.Push(event{}))
	require.NoError(t, s.Shutdown(t.Context()))
	st := s.Stats()
	requireIdentity(t, st, 1)
	require.Equal(t, uint64(1), st.Failed)
	require.Zero(t, st.Retried)
	require.Contains(t, st.LastError, "message size exceeds maximum")
}

// TestAPushAllocatesNothing counts the allocations of the process while
// pushes succeed. The worker holds what they push (a batch as large as the
// ring, a MaxDelay longer than the test) until Shutdown, so that the drain
// path's allocations, which publish the values, do not fall into the count
// (with the worker publishing meanwhile, the count read one per push now
// and then: testing.AllocsPerRun counts every goroutine's). The embedded
// server's own goroutines still allocate now and then (a few in thousands
// of calls, more under -race), so the count is the least of five
// measurements: a push that allocated would show in all five.
func TestAPushAllocatesNothing(t *testing.T) {
	const calls, measurements = 2000, 5
	srv := embeddedServer(t)
	stream(t, srv.JetStream, "ALLOCS", "allocs")
	s, err := natssink.New(srv.JetStream, natssink.Config[event]{
		Subject: "allocs", Encode: encodeEvent,
		Sink: sink.Config[event]{Shards: 1, RingCapacity: 16384, BatchSize: 16384, MaxDelay: time.Hour},
	})
	require.NoError(t, err)
	ev := event{Producer: 1, Seq: 2}
	least := 1.0
	for range measurements {
		least = min(least, allocs.PerCall(calls, func() { require.True(t, s.Push(ev)) }))
	}
	require.Less(t, least, allocs.Noise)
	require.NoError(t, s.Shutdown(t.Context()))
	pushed := uint64(measurements * (calls + 1))
	requireIdentity(t, s.Stats(), pushed)
	require.Equal(t, pushed, s.Stats().Acked, "every push of the count was a success")
}

// The server goes away mid-run: what was acked stays acked, what was
// published after is retried, then counted as failed, within the budget;
// the rings shed while the workers wait at MaxInFlight, never more than
// MaxInFlight is in flight, and Shutdown returns in bounded time.
func TestAServerThatGoesAwayGivesCountedFailuresNotAHang(t *testing.T) {
	srv := embeddedServer(t)
	st := stream(t, srv.JetStream, "GONE", "gone")
	// A connection of the sink's own, which stays open (reconnecting) when
	// the server goes away; srv.Stop closes srv.Conn.
	nc, js, err := natssink.Connect(srv.URL)
	require.NoError(t, err)
	defer nc.Close()
	const maxInFlight = 64
	s, err := natssink.New(js, natssink.Config[event]{
		Subject: "gone", Encode: encodeEvent, MaxInFlight: maxInFlight,
		AckTimeout: 100 * time.Millisecond, Attempts: 3, RetryBudget: time.Second, RetryBackoff: 20 * time.Millisecond,
		Sink: sink.Config[event]{RingCapacity: 128, Shards: 2, Logger: quiet},
	})
	require.NoError(t, err)

	pushed := pushFor(s, 4, 1000)
	require.NoError(t, s.Flush(t.Context()))
	before := s.Stats()
	require.Equal(t, before.Pushed-before.Dropped, before.Acked, "all acked while the server is up: %+v", before)
	info, err := st.Info(t.Context())
	require.NoError(t, err)
	require.Equal(t, before.Acked, info.State.Msgs)

	srv.Stop()
	var most atomic.Int64
	stop := make(chan struct{})
	var watcher sync.WaitGroup
	watcher.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if n := int64(s.Stats().InFlight); n > most.Load() {
				most.Store(n)
			}
			time.Sleep(time.Millisecond)
		}
	})
	pushed += pushFor(s, 4, 20000)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	require.NoError(t, s.Shutdown(ctx))
	took := time.Since(start)
	close(stop)
	watcher.Wait()
	after := s.Stats()
	t.Logf("Shutdown took %v; most in flight %d; %+v", took, most.Load(), after)
	requireIdentity(t, after, pushed)
	require.Equal(t, before.Acked, after.Acked, "nothing is acked once the server is gone")
	require.Positive(t, after.Failed)
	require.Positive(t, after.Dropped, "the rings shed while the workers waited")
	require.LessOrEqual(t, most.Load(), int64(maxInFlight))
	// 256 values in the rings and 64 in flight, 64 at a time, 3 attempts of
	// 100 ms each: about 1.5 s.
	require.Less(t, took, 10*time.Second, "bounded by the attempts and the ring contents")
	require.Positive(t, after.Retried)
	require.NotContains(t, after.LastError, "connection closed", "the connection was reconnecting, not closed")
}

// quiet is a logger for tests that expect failure and overload reports.
var quiet = slog.New(slog.DiscardHandler)

// pushFor pushes each from each of producers goroutines, and returns how
// many pushes were made.
func pushFor(s *natssink.Sink[event], producers, each int) uint64 {
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				s.Push(event{Producer: p, Seq: i})
			}
		})
	}
	wg.Wait()
	return uint64(producers * each)
}
