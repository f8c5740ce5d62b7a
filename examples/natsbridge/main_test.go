package main

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardedsink/shardedsink/natssink/embedded"
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
	require.True(t, res.Owned)
	require.Equal(t, int64(st.Acked), res.Stored, "one message per acked event")
}

// With -url at a shared server, an existing stream is used as it is: its
// subjects, storage and limits are not rewritten, and a stream at its
// limits (which gains nothing) is no error and no underflow.
func TestRunLeavesAnExistingStreamAsItIs(t *testing.T) {
	srv, err := embedded.Start("")
	require.NoError(t, err)
	defer srv.Stop()
	want := jetstream.StreamConfig{
		Name: "SHARED", Subjects: []string{"shared.>"}, Storage: jetstream.MemoryStorage, MaxMsgs: 10,
	}
	st, err := srv.JetStream.CreateStream(t.Context(), want)
	require.NoError(t, err)
	for range 10 {
		_, err := srv.JetStream.Publish(t.Context(), "shared.other", []byte("someone else's"))
		require.NoError(t, err)
	}
	res, err := run(context.Background(), options{
		url: srv.URL, subject: "shared.bridge", stream: "SHARED", producers: 2, events: 100, ackTimeout: 5 * time.Second,
	})
	require.NoError(t, err)
	require.False(t, res.Owned)
	require.Equal(t, uint64(200), res.Sink.Acked)
	require.Zero(t, res.Stored, "a stream at MaxMsgs gains nothing")
	info, err := st.Info(t.Context())
	require.NoError(t, err)
	require.Equal(t, want.Subjects, info.Config.Subjects)
	require.Equal(t, jetstream.MemoryStorage, info.Config.Storage)
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
	require.Equal(t, int64(res.Sink.Acked), res.Stored)

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
