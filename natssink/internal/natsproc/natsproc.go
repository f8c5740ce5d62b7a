// Package natsproc runs a JetStream cluster of nats-server processes on
// loopback, for natssink's fault test and its crash probe: a process can
// be killed with SIGKILL (no shutdown, no hand-over of leadership) and
// restarted on the same ports and store.
//
// The binary is built from the nats-server module that natssink's go.mod
// requires ([Build]), so the test and the probe run the server version
// the module is tested against, with no server installed.
package natsproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Build builds github.com/nats-io/nats-server/v2 into dir and returns the
// binary's path. It runs the go command in the current directory, which
// must be inside the natssink module (a test's directory is), without
// the race detector whatever the caller's flags. It takes about a minute
// on two cores the first time and seconds once the build cache holds it.
func Build(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "nats-server")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/nats-io/nats-server/v2")
	cmd.Env = append(os.Environ(), "GOFLAGS=", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("natsproc: go build nats-server: %w\n%s", err, out)
	}
	return bin, nil
}

// Cluster is n nats-server processes with JetStream, routed to each other,
// listening on 127.0.0.1 only.
type Cluster struct {
	bin   string
	dir   string
	names []string
	ports []int // client ports
	cport []int // route ports
	procs []*exec.Cmd
}

// Start starts n servers (named n1, n2, ...) that store in and log to
// folders of dir, and waits until each accepts connections. Stop them
// with [Cluster.Stop].
func Start(bin, dir string, n int) (*Cluster, error) {
	ports, err := freePorts(2 * n)
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, dir: dir, ports: ports[:n], cport: ports[n:], procs: make([]*exec.Cmd, n)}
	for i := range n {
		c.names = append(c.names, fmt.Sprintf("n%d", i+1))
	}
	for i := range n {
		if err := c.Restart(i); err != nil {
			c.Stop()
			return nil, err
		}
	}
	return c, nil
}

// freePorts returns n TCP ports of 127.0.0.1 that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}()
	ports := make([]int, n)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("natsproc: a free port: %w", err)
		}
		lns = append(lns, ln)
		ports[i] = ln.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}

// Restart starts server i (again, on the same ports and store) and waits
// until it accepts connections, for at most 20 s.
func (c *Cluster) Restart(i int) error {
	if c.procs[i] != nil {
		return fmt.Errorf("natsproc: %s is running", c.names[i])
	}
	var routes []string
	for j := range c.names {
		if j != i {
			routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", c.cport[j]))
		}
	}
	store := filepath.Join(c.dir, c.names[i])
	cmd := exec.Command(c.bin,
		"-n", c.names[i], "-a", "127.0.0.1", "-p", fmt.Sprint(c.ports[i]),
		"-js", "-sd", store,
		"--cluster_name", "natsproc", "--cluster", fmt.Sprintf("nats://127.0.0.1:%d", c.cport[i]),
		"--routes", strings.Join(routes, ","),
		"-l", store+".log",
	)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("natsproc: start %s: %w", c.names[i], err)
	}
	c.procs[i] = cmd
	if err := waitReady(c.ports[i], 20*time.Second); err != nil {
		_ = c.Kill(i)
		return fmt.Errorf("natsproc: %s: %w (log: %s)", c.names[i], err, store+".log")
	}
	return nil
}

// waitReady dials the client port until the server sends its INFO line.
func waitReady(port int, d time.Duration) error {
	deadline := time.Now().Add(d)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	var err error
	for time.Now().Before(deadline) {
		var conn net.Conn
		if conn, err = net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = conn.SetReadDeadline(time.Now().Add(time.Second))
			var line string
			line, err = bufio.NewReader(conn).ReadString('\n')
			_ = conn.Close()
			if err == nil && strings.HasPrefix(line, "INFO ") {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("not accepting connections on %s within %v: %v", addr, d, err)
}

// Kill kills server i with SIGKILL and waits for the process to end.
func (c *Cluster) Kill(i int) error {
	cmd := c.procs[i]
	if cmd == nil {
		return nil
	}
	c.procs[i] = nil
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("natsproc: kill %s: %w", c.names[i], err)
	}
	_ = cmd.Wait() // "signal: killed"
	return nil
}

// Stop kills every server still running.
func (c *Cluster) Stop() {
	for i := range c.procs {
		_ = c.Kill(i)
	}
}

// URL returns server i's client URL.
func (c *Cluster) URL(i int) string { return fmt.Sprintf("nats://127.0.0.1:%d", c.ports[i]) }

// URLs returns every server's client URL, comma-separated, server first
// and then the others in order.
func (c *Cluster) URLs(first int) string {
	urls := []string{c.URL(first)}
	for i := range c.ports {
		if i != first {
			urls = append(urls, c.URL(i))
		}
	}
	return strings.Join(urls, ",")
}

// Index returns the index of the server named name, or -1.
func (c *Cluster) Index(name string) int {
	for i, n := range c.names {
		if n == name {
			return i
		}
	}
	return -1
}

// Log returns the path of server i's log file.
func (c *Cluster) Log(i int) string { return filepath.Join(c.dir, c.names[i]) + ".log" }
