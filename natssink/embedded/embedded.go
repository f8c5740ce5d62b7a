// Package embedded starts a NATS server with JetStream inside the process,
// for development, examples and tests of natssink: no server to install,
// nothing listening beyond the loopback interface.
//
//	srv, err := embedded.Start("") // JetStream in a temporary folder
//	defer srv.Stop()
//	s, err := natssink.New(srv.JetStream, cfg)
//
// In production, point natssink.Connect at the cluster's URL instead of
// srv.URL; nothing else changes. It is a package of its own so that a
// program that does not import it does not link the server.
package embedded

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/shardedsink/shardedsink/natssink"
)

// Server is a running in-process nats-server with JetStream and a client
// connection to it.
type Server struct {
	// URL is the client URL, nats://127.0.0.1:PORT (a port the system
	// chose).
	URL string
	// Conn and JetStream are a connection made by natssink.Connect(URL).
	Conn      *nats.Conn
	JetStream jetstream.JetStream
	// Dir is the JetStream store.
	Dir string

	srv      *server.Server
	removeAt bool // Stop removes Dir: Start created it
	stopOnce sync.Once
}

// Start starts a server that listens on 127.0.0.1 on a port the system
// chooses, with JetStream storing in dir ("" for a temporary folder that
// Stop removes), and nothing else: no monitoring, cluster, gateway,
// leafnode or websocket listener, no logging, no signal handlers. It
// returns once the server accepts connections and Conn is connected.
func Start(dir string) (*Server, error) {
	s := &Server{Dir: dir}
	if dir == "" {
		d, err := os.MkdirTemp("", "natssink-embedded-")
		if err != nil {
			return nil, fmt.Errorf("embedded: %w", err)
		}
		s.Dir, s.removeAt = d, true
	}
	srv, err := server.NewServer(&server.Options{
		ServerName: "natssink-embedded",
		Host:       "127.0.0.1",
		Port:       server.RANDOM_PORT,
		JetStream:  true,
		StoreDir:   s.Dir,
		NoLog:      true,
		NoSigs:     true,
	})
	if err != nil {
		s.removeDir()
		return nil, fmt.Errorf("embedded: nats-server: %w", err)
	}
	srv.Start()
	s.srv = srv
	if !srv.ReadyForConnections(10 * time.Second) {
		s.Stop()
		return nil, fmt.Errorf("embedded: nats-server not ready for connections after 10s")
	}
	s.URL = srv.ClientURL()
	s.Conn, s.JetStream, err = natssink.Connect(s.URL, nats.Name("natssink-embedded"))
	if err != nil {
		s.Stop()
		return nil, fmt.Errorf("embedded: %w", err)
	}
	return s, nil
}

// Stop closes Conn, shuts the server down, waits for it, and removes the
// store when Start created it. It is safe to call more than once.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		if s.Conn != nil {
			s.Conn.Close()
		}
		if s.srv != nil {
			s.srv.Shutdown()
			s.srv.WaitForShutdown()
		}
		s.removeDir()
	})
}

func (s *Server) removeDir() {
	if s.removeAt {
		_ = os.RemoveAll(s.Dir)
	}
}
