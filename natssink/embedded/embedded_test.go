package embedded_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardedsink/shardedsink/natssink/embedded"
)

// The server's goroutines and the connection's are gone after Stop.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestStartServesJetStreamOnLoopbackUntilStop(t *testing.T) {
	srv, err := embedded.Start("")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(srv.URL, "nats://127.0.0.1:"), srv.URL)
	require.True(t, srv.Conn.IsConnected())
	_, err = srv.JetStream.CreateStream(context.Background(), jetstream.StreamConfig{Name: "S", Subjects: []string{"s"}})
	require.NoError(t, err)
	_, err = srv.JetStream.Publish(context.Background(), "s", []byte("x"))
	require.NoError(t, err)
	require.DirExists(t, srv.Dir)

	srv.Stop()
	srv.Stop() // twice is fine
	require.True(t, srv.Conn.IsClosed())
	_, err = os.Stat(srv.Dir)
	require.True(t, os.IsNotExist(err), "the temporary store is removed")
}

func TestStartKeepsTheStoreItWasGiven(t *testing.T) {
	dir := t.TempDir()
	srv, err := embedded.Start(dir)
	require.NoError(t, err)
	_, err = srv.JetStream.CreateStream(context.Background(), jetstream.StreamConfig{Name: "KEPT", Subjects: []string{"kept"}})
	require.NoError(t, err)
	_, err = srv.JetStream.Publish(context.Background(), "kept", []byte("x"))
	require.NoError(t, err)
	srv.Stop()
	require.DirExists(t, dir)

	// A server on the same store finds the stream and its message.
	again, err := embedded.Start(dir)
	require.NoError(t, err)
	defer again.Stop()
	st, err := again.JetStream.Stream(context.Background(), "KEPT")
	require.NoError(t, err)
	info, err := st.Info(context.Background())
	require.NoError(t, err)
	require.Equal(t, uint64(1), info.State.Msgs)
}

// A JetStream that cannot start (its store is a file) is Start's error at
// once, with the server's reason, not a generic one after 10 s.
func TestStartSaysWhyJetStreamDidNotStart(t *testing.T) {
	file := t.TempDir() + "/not-a-folder"
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
	start := time.Now()
	srv, err := embedded.Start(file)
	require.Nil(t, srv)
	require.Error(t, err)
	require.Less(t, time.Since(start), 3*time.Second, "at once: %v", err)
	require.Contains(t, err.Error(), "JetStream")
	require.Contains(t, err.Error(), "storage directory is not a directory", "the server's reason")
	require.Contains(t, err.Error(), "not-a-folder")
}
