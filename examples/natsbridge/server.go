package main

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// startServer starts an in-process nats-server with JetStream, storing in
// dir, listening on 127.0.0.1 on a port the OS picks, and nothing else (no
// monitoring, cluster, gateway, leafnode or websocket listener).
func startServer(dir string) (*server.Server, error) {
	s, err := server.NewServer(&server.Options{
		ServerName: "natsbridge",
		Host:       "127.0.0.1",
		Port:       server.RANDOM_PORT,
		JetStream:  true,
		StoreDir:   dir,
		NoLog:      true,
		NoSigs:     true,
	})
	if err != nil {
		return nil, fmt.Errorf("nats-server: %w", err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		s.WaitForShutdown()
		return nil, fmt.Errorf("nats-server: not ready for connections after 10s")
	}
	return s, nil
}

// connect connects to url. Publishes made while the client is
// reconnecting fail at once (no reconnect buffer) instead of waiting in a
// buffer that a server which never comes back would silently lose.
func connect(url string) (*nats.Conn, error) {
	return nats.Connect(url,
		nats.Name("natsbridge"),
		nats.ReconnectBufSize(-1),
		nats.ReconnectWait(100*time.Millisecond),
		nats.Timeout(5*time.Second),
	)
}

// ensureStream creates (or updates) the stream that stores subject, file
// backed, so that JetStream acks the batches published to it.
func ensureStream(ctx context.Context, nc *nats.Conn, stream, subject string) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	_, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:     stream,
		Subjects: []string{subject},
		Storage:  jetstream.FileStorage,
	})
	if err != nil {
		return fmt.Errorf("stream %s: %w", stream, err)
	}
	return nil
}
