package natssink_test

import (
	"context"
	"flag"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/natssink"
)

var soak = flag.Bool("soak", false, "run the cluster fault test longer: five leader restarts over about 40 s")

// cluster is a JetStream cluster of nats-server instances in this
// process, on loopback ports, each storing in a temporary folder.
type cluster struct {
	t    *testing.T
	opts []*server.Options
	srvs []*server.Server
}

// freePorts returns n TCP ports on 127.0.0.1 that were free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		ports[i] = ln.Addr().(*net.TCPAddr).Port
		require.NoError(t, ln.Close())
	}
	return ports
}

// startCluster starts n servers with routes to each other and waits until
// JetStream's meta group has a leader.
func startCluster(t *testing.T, n int) *cluster {
	t.Helper()
	ports := freePorts(t, 2*n)
	c := &cluster{t: t, srvs: make([]*server.Server, n)}
	for i := range n {
		var routes []string
		for j := range n {
			if j != i {
				routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", ports[n+j]))
			}
		}
		c.opts = append(c.opts, &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1),
			Host:       "127.0.0.1",
			Port:       ports[i],
			JetStream:  true,
			StoreDir:   t.TempDir(),
			Cluster:    server.ClusterOpts{Name: "natssink-test", Host: "127.0.0.1", Port: ports[n+i]},
			Routes:     server.RoutesFromStr(strings.Join(routes, ",")),
			NoLog:      true,
			NoSigs:     true,
		})
	}
	t.Cleanup(c.stopAll)
	for i := range n {
		c.start(i)
	}
	return c
}

// start starts (or restarts, with the same options and store) server i.
func (c *cluster) start(i int) {
	c.t.Helper()
	s, err := server.NewServer(c.opts[i])
	require.NoError(c.t, err)
	s.Start()
	require.True(c.t, s.ReadyForConnections(10*time.Second), "server %s", c.opts[i].ServerName)
	c.srvs[i] = s
}

// stop shuts server i down and waits for it.
func (c *cluster) stop(i int) {
	if s := c.srvs[i]; s != nil {
		s.Shutdown()
		s.WaitForShutdown()
		c.srvs[i] = nil
	}
}

func (c *cluster) stopAll() {
	for i := range c.srvs {
		c.stop(i)
	}
}

// url is the cluster's client URL: every server's, comma-separated.
func (c *cluster) url() string {
	var urls []string
	for _, o := range c.opts {
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", o.Port))
	}
	return strings.Join(urls, ",")
}

// index returns the index of the server named name.
func (c *cluster) index(name string) int {
	for i, o := range c.opts {
		if o.ServerName == name {
			return i
		}
	}
	c.t.Fatalf("no server %q", name)
	return -1
}

// until retries f every 50 ms until it returns nil, for at most d.
func until(t *testing.T, d time.Duration, what string, f func(ctx context.Context) error) {
	t.Helper()
	deadline := time.Now().Add(d)
	var err error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = f(ctx)
		cancel()
		if err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: not within %v: %v", what, d, err)
}

// streamReady returns nil once the stream has a leader and every replica
// is current.
func streamReady(st jetstream.Stream) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		info, err := st.Info(ctx)
		if err != nil {
			return err
		}
		cl := info.Cluster
		if cl == nil || cl.Leader == "" || len(cl.Replicas) != 2 {
			return fmt.Errorf("cluster %+v", cl)
		}
		for _, r := range cl.Replicas {
			if !r.Current || r.Offline {
				return fmt.Errorf("replica %+v", r)
			}
		}
		return nil
	}
}

// A three-node JetStream cluster on loopback and an R3 stream; producers
// push for a few seconds while the stream's leader is shut down and
// restarted. Afterwards the stream holds exactly the values counted as
// acked, none twice, and Acked + Failed + Dropped == Pushed.
func TestClusterLeaderRestartLosesAndDuplicatesNothing(t *testing.T) {
	restarts, pushFor := 1, 4*time.Second
	if *soak {
		restarts, pushFor = 5, 40*time.Second
	}
	c := startCluster(t, 3)
	// The client's default handler prints the asynchronous errors (a write
	// to the server being shut down) on standard error.
	nc, js, err := natssink.Connect(c.url(), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	require.NoError(t, err)
	defer nc.Close()

	var st jetstream.Stream
	until(t, 30*time.Second, "an R3 stream", func(ctx context.Context) error {
		st, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name: "FAULT", Subjects: []string{"fault.>"}, Replicas: 3, Storage: jetstream.FileStorage,
		})
		return err
	})
	until(t, 30*time.Second, "the stream's replicas current", streamReady(st))

	s, err := natssink.New(js, natssink.Config[event]{
		Subject: "fault.events", Encode: encodeEvent,
		MaxInFlight: 1024, RingCapacity: 512,
		// A leader change takes a few seconds: a value is retried well
		// beyond it, and well within the stream's 2-minute duplicate window.
		AckTimeout: time.Second, Attempts: 30, RetryBudget: 40 * time.Second, RetryBackoff: 50 * time.Millisecond,
		Logger: quiet,
	})
	require.NoError(t, err)

	// Producers pace themselves (a burst, then a pause), as a service does:
	// flat-out producers would only measure the rings shedding. A few
	// thousand values a second is about what three servers and the
	// client take on two cores under -race; more is shed.
	const producers = 4
	pushes := make([]atomic.Int64, producers)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := 0; ; {
				select {
				case <-stop:
					return
				default:
				}
				for range 4 {
					s.Push(event{Producer: p, Seq: i})
					i++
					pushes[p].Store(int64(i))
				}
				time.Sleep(time.Millisecond)
			}
		})
	}

	leaders := []string{}
	start := time.Now()
	for r := range restarts {
		// Shut the leader down at a point in each slice of the run, and
		// restart it 1.5 s later.
		time.Sleep(time.Until(start.Add(pushFor * time.Duration(2*r+1) / time.Duration(2*restarts+1))))
		var leader string
		until(t, 30*time.Second, "the stream's leader", func(ctx context.Context) error {
			info, err := st.Info(ctx)
			if err == nil {
				leader = info.Cluster.Leader
			}
			return err
		})
		leaders = append(leaders, leader)
		i := c.index(leader)
		t.Logf("%v: shutting the stream leader %s down", time.Since(start).Round(time.Millisecond), leader)
		c.stop(i)
		time.Sleep(1500 * time.Millisecond)
		t.Logf("%v: restarting %s", time.Since(start).Round(time.Millisecond), leader)
		c.start(i)
		until(t, 30*time.Second, "the stream's replicas current", streamReady(st))
	}
	time.Sleep(time.Until(start.Add(pushFor)))
	close(stop)
	wg.Wait()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
	var pushed uint64
	for p := range pushes {
		pushed += uint64(pushes[p].Load())
	}
	stats := s.Stats()
	t.Logf("%v: %+v", time.Since(start).Round(time.Millisecond), stats)
	require.Equal(t, pushed, stats.Pushed)
	require.Equal(t, stats.Pushed, stats.Acked+stats.Failed+stats.Dropped, "Acked + Failed + Dropped == Pushed")
	require.Positive(t, stats.Acked)

	msgs := readAll(t, st)
	require.Len(t, msgs, int(stats.Acked), "the stream holds exactly the acked values")
	ids := make(map[string]bool, len(msgs))
	values := make(map[event]bool, len(msgs))
	for _, m := range msgs {
		require.False(t, ids[m.MsgID], "Nats-Msg-Id %s twice", m.MsgID)
		ids[m.MsgID] = true
		require.False(t, values[m.Event], "value %+v twice", m.Event)
		values[m.Event] = true
		require.Less(t, int64(m.Event.Seq), pushes[m.Event.Producer].Load(), "a value that was pushed")
	}
	t.Logf("leaders shut down: %v", leaders)
}
