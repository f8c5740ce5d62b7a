package natssink_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/sink"
)

// TestABurstPushedWithPushWaitIsAckedWhole is issue 36's natssink goal: 64
// producers push 500 values each at once into a sink with the default
// Config; with Push the rings shed part of such a burst, with PushWait and
// a 1 s ctx the producers wait for room and nothing is dropped: every value
// is acked and stored once.
func TestABurstPushedWithPushWaitIsAckedWhole(t *testing.T) {
	srv := embeddedServer(t)
	st := stream(t, srv.JetStream, "BURST", "burst.>")
	s, err := natssink.New(srv.JetStream, natssink.Config[event]{Subject: "burst.app", Encode: encodeEvent})
	require.NoError(t, err)

	const producers, each = 64, 500
	start := make(chan struct{})
	errs := make(chan error, producers*each)
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			<-start
			for i := range each {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				if err := s.PushWait(ctx, event{Producer: p, Seq: i}); err != nil {
					errs <- err
				}
				cancel()
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
	stats := s.Stats()
	requireIdentity(t, stats, producers*each)
	require.Zero(t, stats.Dropped, "%+v", stats)
	require.Zero(t, stats.WaitedOut, "%+v", stats)
	require.Equal(t, uint64(producers*each), stats.Acked)

	msgs := readAll(t, st)
	require.Len(t, msgs, producers*each, "every value stored")
	seen := map[event]bool{}
	for _, m := range msgs {
		require.False(t, seen[m.Event], "%+v stored twice", m.Event)
		seen[m.Event] = true
	}
}

func TestPushWaitAfterShutdownIsRefusedAndCounted(t *testing.T) {
	srv := embeddedServer(t)
	stream(t, srv.JetStream, "LATE", "late.>")
	s, err := natssink.New(srv.JetStream, natssink.Config[event]{Subject: "late.app", Encode: encodeEvent})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
	err = s.PushWait(ctx, event{})
	require.ErrorIs(t, err, natssink.ErrShutdown)
	require.ErrorIs(t, err, sink.ErrShutdown)
	require.False(t, errors.Is(err, context.Canceled))
	stats := s.Stats()
	require.Equal(t, uint64(1), stats.Dropped)
	requireIdentity(t, stats, 1)
}
