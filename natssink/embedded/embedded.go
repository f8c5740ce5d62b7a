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
	"errors"
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
// returns once the server accepts connections and Conn is connected, or
// as soon as the server logs an error before that (a JetStream that
// cannot start: its reason is the error), or after 10 s.
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
	// No log, but the server's errors: a JetStream that cannot start is
	// Start's error, with the server's reason, as soon as it says so.
	errs := &errorLog{}
	srv.SetLogger(errs, false, false)
	srv.Start()
	s.srv = srv
	deadline := time.Now().Add(10 * time.Second)
	for !srv.ReadyForConnections(20 * time.Millisecond) {
		if err := errs.first(); err != nil {
			s.Stop()
			return nil, fmt.Errorf("embedded: nats-server (store %s): %w", s.Dir, err)
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("embedded: nats-server not ready for connections after 10s")
		}
	}
	if !srv.JetStreamEnabled() {
		s.Stop()
		return nil, fmt.Errorf("embedded: nats-server (store %s) started without JetStream: %w", s.Dir, errors.Join(errs.first(), errors.New("JetStream not enabled")))
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

// errorLog is the server's logger: it keeps the first error (or fatal
// error) the server logs and drops every other record.
type errorLog struct {
	mu  sync.Mutex
	err error
}

func (l *errorLog) record(format string, v []any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = fmt.Errorf(format, v...)
	}
}

func (l *errorLog) first() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

func (l *errorLog) Errorf(format string, v ...any) { l.record(format, v) }
func (l *errorLog) Fatalf(format string, v ...any) { l.record(format, v) }
func (*errorLog) Noticef(string, ...any)           {}
func (*errorLog) Warnf(string, ...any)             {}
func (*errorLog) Debugf(string, ...any)            {}
func (*errorLog) Tracef(string, ...any)            {}

func (s *Server) removeDir() {
	if s.removeAt {
		_ = os.RemoveAll(s.Dir)
	}
}
