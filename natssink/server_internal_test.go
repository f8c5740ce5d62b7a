package natssink

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
)

// startServer starts a nats-server with JetStream on 127.0.0.1 for one
// test (the internal tests cannot import the package embedded, which
// imports this one) and connects to it with a stream capturing subject.
func startServer(t testing.TB, subject string) (*nats.Conn, jetstream.JetStream, jetstream.Stream) {
	t.Helper()
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
	})
	require.NoError(t, err)
	srv.Start()
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	require.True(t, srv.ReadyForConnections(10*time.Second))
	nc, js, err := Connect(srv.ClientURL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "TEST", Subjects: []string{subject}, Storage: jetstream.MemoryStorage,
	})
	require.NoError(t, err)
	return nc, js, st
}

// lossyTransport sends the first attempt of each value with a reply
// subject nobody listens on: the stream stores the value and its ack is
// lost, as when a connection drops after the publish.
type lossyTransport struct{ connTransport }

func (l lossyTransport) publish(subject, reply string, hdr nats.Header, payload []byte) error {
	if reply[len(reply)-2:] == ".1" {
		reply = "_INBOX.lost"
	}
	return l.connTransport.publish(subject, reply, hdr, payload)
}

// The stream stores a value once when its ack was lost and the retry
// carried the same Nats-Msg-Id: the retry's ack says duplicate.
func TestARetryAfterALostAckIsStoredOnce(t *testing.T) {
	nc, js, st := startServer(t, "lossy")
	s, err := New(js, Config[int]{Subject: "lossy", Encode: encodeInt, AckTimeout: 200 * time.Millisecond})
	require.NoError(t, err)
	s.transport = lossyTransport{connTransport{nc}} // before the first push
	const n = 100
	for i := range n {
		require.True(t, s.Push(i))
	}
	require.NoError(t, s.Shutdown(t.Context()))
	stats := s.Stats()
	require.Equal(t, uint64(n), stats.Acked, "%+v", stats)
	require.Equal(t, uint64(n), stats.Retried, "every first ack was lost")
	require.Equal(t, uint64(n), stats.Duplicates, "every retry was recognised")
	info, err := st.Info(t.Context())
	require.NoError(t, err)
	require.Equal(t, uint64(n), info.State.Msgs, "stored once each")
}
