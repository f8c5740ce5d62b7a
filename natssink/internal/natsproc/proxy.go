package natsproc

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
)

// Proxy forwards TCP connections from a loopback port to a server's
// client port, and can lose everything the server sends (acks included)
// while it still forwards what the client sends: the acks of messages
// the stream stores are lost, as when a node dies after its stream
// stored a message and before the ack reached the client.
type Proxy struct {
	ln     net.Listener
	target string
	drop   atomic.Bool

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

// NewProxy listens on 127.0.0.1 and forwards each connection to target.
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("natsproc: proxy: %w", err)
	}
	p := &Proxy{ln: ln, target: target}
	p.wg.Go(p.accept)
	return p, nil
}

// URL is the proxy's client URL.
func (p *Proxy) URL() string { return "nats://" + p.ln.Addr().String() }

// LoseReplies makes the proxy discard what the servers send from now on.
func (p *Proxy) LoseReplies() { p.drop.Store(true) }

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		p.wg.Go(func() { p.pipe(s, c, false) })
		p.wg.Go(func() { p.pipe(c, s, true) })
	}
}

// pipe copies src to dst until either ends, discarding what it reads
// while the proxy loses replies (fromServer), then closes both.
func (p *Proxy) pipe(dst, src net.Conn, fromServer bool) {
	defer func() { _ = dst.Close(); _ = src.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !(fromServer && p.drop.Load()) {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // io.EOF, or a closed connection
		}
	}
}

// Close stops listening, closes every connection and waits for the
// proxy's goroutines.
func (p *Proxy) Close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
