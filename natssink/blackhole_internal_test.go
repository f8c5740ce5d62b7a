package natssink

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
)

// blackhole is a NATS server that takes everything and answers only
// PINGs: the client's publishes cost what they cost on the client and
// nothing else happens in the process (no server work, no acks coming
// back), so the allocations of a run are those of the publishing side.
// It reads into one buffer and allocates nothing per message.
type blackhole struct {
	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

func startBlackhole(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	b := &blackhole{ln: ln}
	b.wg.Go(b.accept)
	t.Cleanup(b.stop)
	return "nats://" + ln.Addr().String()
}

func (b *blackhole) accept() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		b.mu.Lock()
		b.conns = append(b.conns, c)
		b.mu.Unlock()
		b.wg.Go(func() { b.serve(c) })
	}
}

var ping = []byte("PING\r\n")

func (b *blackhole) serve(c net.Conn) {
	port := b.ln.Addr().(*net.TCPAddr).Port
	_, err := fmt.Fprintf(c, `INFO {"server_id":"blackhole","server_name":"blackhole","version":"2.15.2","proto":1,"host":"127.0.0.1","port":%d,"headers":true,"max_payload":1048576}`+"\r\n", port)
	if err != nil {
		return
	}
	buf := make([]byte, 64<<10)
	carry := 0 // bytes kept from the last read: a PING split across two reads
	for {
		n, err := c.Read(buf[carry:])
		if err != nil {
			return
		}
		data := buf[:carry+n]
		for {
			i := bytes.Index(data, ping)
			if i < 0 {
				break
			}
			if _, err := io.WriteString(c, "PONG\r\n"); err != nil {
				return
			}
			data = data[i+len(ping):]
		}
		carry = copy(buf, data[max(0, len(data)-len(ping)+1):])
	}
}

func (b *blackhole) stop() {
	_ = b.ln.Close()
	b.mu.Lock()
	for _, c := range b.conns {
		_ = c.Close()
	}
	b.mu.Unlock()
	b.wg.Wait()
}

// connectBlackhole connects to a new blackhole server.
func connectBlackhole(t testing.TB) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, js, err := Connect(startBlackhole(t))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc, js
}
