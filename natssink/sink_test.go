package natssink_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/natssink"
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
	srv := server(t)
	st := stream(t, srv.JetStream, "EVENTS", "events.>")
	s, err := natssink.New(srv.JetStream, natssink.Config[event]{
		Subject: "events.test", Encode: encodeEvent, RingCapacity: 1 << 14,
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
