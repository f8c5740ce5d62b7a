package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRunDeliversEveryAcceptedEventAsOneMessage(t *testing.T) {
	res, err := run(context.Background(), options{
		subject: "test.events", stream: "TEST", producers: 32, events: 3000, ackTimeout: 5 * time.Second,
	})
	require.NoError(t, err)
	st := res.Sink
	require.Equal(t, uint64(32*3000), st.Pushed)
	require.Equal(t, uint64(res.Accepted), st.Acked+st.Failed, "every accepted event is acked or failed")
	require.Equal(t, uint64(res.Pushed-res.Accepted), st.Dropped)
	require.Zero(t, st.Failed)
	require.Equal(t, st.Acked, res.Stored, "one message per acked event")
}

// -max-delay reaches the sink: with it every accepted event is still
// delivered (Shutdown does not wait for it), and a negative one is refused
// by name.
func TestRunWithMaxDelay(t *testing.T) {
	res, err := run(context.Background(), options{
		subject: "test.delay", stream: "TESTDELAY", producers: 4, events: 500,
		ackTimeout: 5 * time.Second, maxDelay: 50 * time.Millisecond,
	})
	require.NoError(t, err)
	require.Equal(t, uint64(res.Accepted), res.Sink.Acked)
	require.Equal(t, res.Sink.Acked, res.Stored)

	_, err = run(context.Background(), options{
		subject: "test.delay", stream: "TESTDELAY", producers: 1, events: 1,
		ackTimeout: time.Second, maxDelay: -time.Second,
	})
	require.ErrorContains(t, err, "MaxDelay = -1s")
}

func TestEventEncodesAsJSON(t *testing.T) {
	require.Equal(t, `{"p":3,"s":42,"t":1700000000000000000}`,
		string(Event{Producer: 3, Seq: 42, At: 1_700_000_000_000_000_000}.AppendJSON(nil)))
}
