// Package crash is natssink's crash scenario, shared by its fault test and
// the crash probe command: a three-process JetStream cluster on loopback
// ([natsproc]), an R3 file-stored stream, a sink connected to the node of
// the stream's leader, producers pushing at a fixed rate, and that node
// killed with SIGKILL and restarted while they push. It reports what the
// sink counted and what the stream holds.
package crash

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/natssink/internal/natsproc"
)

// Options is one run of the scenario.
type Options struct {
	Bin       string        // the nats-server binary (natsproc.Build)
	Dir       string        // the servers' stores and logs
	Producers int           // goroutines pushing
	Rate      int           // values per second, over all producers
	For       time.Duration // how long they push
	Kill      time.Duration // when the leader's node is killed (SIGKILL), from the first push
	Restart   time.Duration // when it is restarted
	// LoseAcks is how long before the kill the sink's connection to the
	// leader's node loses everything the node sends (a proxy discards
	// it): values the stream stores then have their acks lost, and their
	// retries are recognised as duplicates. Zero: no loss but the kill's.
	LoseAcks time.Duration
	// Config is the sink's configuration; Subject and Encode are set by
	// the scenario, everything else is the caller's (the zero value: the
	// defaults).
	Config natssink.Config[Value]
	// AllowBatched creates the stream with allow_batched, so that a sink
	// with FastBatchesAuto (the default) publishes through fast batches.
	AllowBatched bool
	// Settle, when set, keeps the sink running that long after the
	// pushes end and every value is settled (Flush), and then measures
	// the heap (Result.HeapAfter): what the slots of the outage cost once
	// it is over.
	Settle time.Duration
	// Logf, when set, receives the run's milestones.
	Logf func(format string, args ...any)
}

// Value is what the producers push: a producer and its sequence number,
// encoded with a body of about 195 bytes in all.
type Value struct{ Producer, Seq int }

const body = `"msg":"request served","method":"GET","path":"/api/v1/items","status":200,"bytes":5120,"took_us":812,"host":"web-1","region":"eu-west","trace":"4bf92f3577b34da6a3ce929d0e0e4736"`

// Encode is the sink's Encode: {"p":P,"s":S,body}.
func Encode(dst []byte, v Value) ([]byte, error) {
	dst = append(dst, `{"p":`...)
	dst = strconv.AppendInt(dst, int64(v.Producer), 10)
	dst = append(dst, `,"s":`...)
	dst = strconv.AppendInt(dst, int64(v.Seq), 10)
	dst = append(dst, ',')
	dst = append(dst, body...)
	return append(dst, '}'), nil
}

func decode(p []byte) (Value, error) {
	var v Value
	_, err := fmt.Sscanf(string(p), `{"p":%d,"s":%d,`, &v.Producer, &v.Seq)
	return v, err
}

// Result is what a run counted.
type Result struct {
	Stats      natssink.Stats // the sink's, after its Shutdown
	Shutdown   error          // what Shutdown returned
	Pushed     uint64         // the producers' count of their pushes
	Leader     string         // the node killed
	Connected  string         // the node the sink's connection was on when it was killed
	StreamMsgs uint64         // the messages the stream holds
	// StoredTwice counts values the stream holds more than once; Foreign
	// counts messages that are no value pushed.
	StoredTwice, Foreign int
	MaxHeap              uint64 // the most heap in use, sampled every 100 ms
	// HeapBefore is the heap in use after a GC just before the trouble
	// began; HeapAfter the same, Options.Settle after the backlog
	// cleared (0 without Settle).
	HeapBefore, HeapAfter uint64
}

// String is the probe's one-line summary.
func (r Result) String() string {
	st := r.Stats
	out := fmt.Sprintf("pushed=%d acked=%d batched=%d failed=%d dropped=%d retried=%d duplicates_recognised=%d stream_msgs=%d stored_twice=%d foreign=%d max_heap_mib=%.0f shutdown_err=%v",
		st.Pushed, st.Acked, st.Batched, st.Failed, st.Dropped, st.Retried, st.Duplicates, r.StreamMsgs, r.StoredTwice, r.Foreign,
		float64(r.MaxHeap)/(1<<20), r.Shutdown)
	if r.HeapAfter > 0 {
		out += fmt.Sprintf(" heap_before_mib=%.0f heap_after_settle_mib=%.0f", float64(r.HeapBefore)/(1<<20), float64(r.HeapAfter)/(1<<20))
	}
	return out
}

// Run runs the scenario once. ctx bounds the waits for the cluster (a
// stream leader, replicas current); the run itself takes about For plus
// what the sink's Shutdown needs.
func Run(ctx context.Context, o Options) (Result, error) {
	var res Result
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	c, err := natsproc.Start(o.Bin, o.Dir, 3)
	if err != nil {
		return res, err
	}
	defer c.Stop()
	quiet := nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {})
	admin, ajs, err := natssink.Connect(c.URLs(0), quiet)
	if err != nil {
		return res, err
	}
	defer admin.Close()
	var st jetstream.Stream
	if err := until(ctx, "an R3 stream", func(ctx context.Context) (err error) {
		st, err = ajs.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name: "CRASH", Subjects: []string{"crash.>"}, Replicas: 3, Storage: jetstream.FileStorage,
			AllowBatchPublish: o.AllowBatched,
		})
		return err
	}); err != nil {
		return res, err
	}
	if err := until(ctx, "the stream's replicas current", streamReady(st)); err != nil {
		return res, err
	}
	leader, err := streamLeader(ctx, st)
	if err != nil {
		return res, err
	}
	li := c.Index(leader)
	res.Leader = leader

	// The sink's connection: to the leader's node first, through a proxy,
	// then the others.
	px, err := natsproc.NewProxy(strings.TrimPrefix(c.URL(li), "nats://"))
	if err != nil {
		return res, err
	}
	defer px.Close()
	urls := px.URL() + "," + c.URLs(li)[len(c.URL(li)):]
	nc, js, err := natssink.Connect(urls, nats.DontRandomize(), quiet)
	if err != nil {
		return res, err
	}
	defer nc.Close()
	if got := nc.ConnectedServerName(); got != leader {
		return res, fmt.Errorf("crash: the sink's connection is on %s, not on the leader %s", got, leader)
	}
	cfg := o.Config
	cfg.Subject, cfg.Encode = "crash.values", Encode
	s, err := natssink.New(js, cfg)
	if err != nil {
		return res, err
	}

	var maxHeap atomic.Uint64
	stopSampling := sampleHeap(&maxHeap)
	pushes := make([]atomic.Int64, o.Producers)
	start := time.Now()
	var wg sync.WaitGroup
	perProducer := float64(o.Rate) / float64(o.Producers)
	for p := range o.Producers {
		wg.Go(func() {
			for i := 0; ; {
				el := time.Since(start)
				if el >= o.For {
					return
				}
				for target := int(el.Seconds() * perProducer); i < target; i++ {
					s.Push(Value{Producer: p, Seq: i})
					pushes[p].Store(int64(i + 1))
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
	time.Sleep(time.Until(start.Add(o.Kill - o.LoseAcks)))
	res.HeapBefore = heapInUse()
	if o.LoseAcks > 0 {
		px.LoseReplies()
		logf("%v: the connection to %s loses what it sends; %+v", time.Since(start).Round(time.Millisecond), leader, s.Stats())
	}
	time.Sleep(time.Until(start.Add(o.Kill)))
	res.Connected = nc.ConnectedServerName()
	if err := c.Kill(li); err != nil {
		return res, err
	}
	logf("%v: SIGKILL %s (the sink is connected to %s); %+v", time.Since(start).Round(time.Millisecond), leader, res.Connected, s.Stats())
	time.Sleep(time.Until(start.Add(o.Restart)))
	if err := c.Restart(li); err != nil {
		return res, err
	}
	logf("%v: restarted %s; %+v", time.Since(start).Round(time.Millisecond), leader, s.Stats())
	wg.Wait()
	logf("%v: pushes done; %+v", time.Since(start).Round(time.Millisecond), s.Stats())
	if o.Settle > 0 {
		fctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := s.Flush(fctx)
		cancel()
		if err != nil {
			return res, err
		}
		time.Sleep(o.Settle)
		res.HeapAfter = heapInUse()
		logf("%v: settled for %v; heap %d MiB", time.Since(start).Round(time.Millisecond), o.Settle, res.HeapAfter>>20)
	}

	sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	res.Shutdown = s.Shutdown(sctx)
	cancel()
	stopSampling()
	res.MaxHeap = maxHeap.Load()
	res.Stats = s.Stats()
	for p := range pushes {
		res.Pushed += uint64(pushes[p].Load())
	}
	logf("%v: shut down (%v); %+v", time.Since(start).Round(time.Millisecond), res.Shutdown, res.Stats)

	if err := until(ctx, "the stream's replicas current after the run", streamReady(st)); err != nil {
		return res, err
	}
	counts, n, err := readAll(ctx, st)
	if err != nil {
		return res, err
	}
	res.StreamMsgs = n
	for v, k := range counts {
		if v.Producer < 0 || v.Producer >= o.Producers || int64(v.Seq) >= pushes[v.Producer].Load() || v.Seq < 0 {
			res.Foreign += k
		} else if k > 1 {
			res.StoredTwice += k - 1
		}
	}
	return res, nil
}

// heapInUse returns the heap in use after a garbage collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// sampleHeap stores the most HeapInuse into max every 100 ms until the
// returned func is called.
func sampleHeap(most *atomic.Uint64) func() {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > most.Load() {
				most.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// until calls f every 50 ms until it returns nil, for at most 30 s or
// until ctx ends.
func until(ctx context.Context, what string, f func(ctx context.Context) error) error {
	deadline := time.Now().Add(30 * time.Second)
	var err error
	for time.Now().Before(deadline) && ctx.Err() == nil {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err = f(cctx)
		cancel()
		if err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("crash: %s: not within 30 s: %w", what, errors.Join(err, ctx.Err()))
}

func streamLeader(ctx context.Context, st jetstream.Stream) (string, error) {
	var leader string
	err := until(ctx, "the stream's leader", func(ctx context.Context) error {
		info, err := st.Info(ctx)
		if err != nil {
			return err
		}
		if info.Cluster == nil || info.Cluster.Leader == "" {
			return errors.New("no leader")
		}
		leader = info.Cluster.Leader
		return nil
	})
	return leader, err
}

// streamReady returns nil once the stream has a leader and both replicas
// are current (ReadyLeader).
func streamReady(st jetstream.Stream) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		_, err := ReadyLeader(ctx, st)
		return err
	}
}

// ReadyLeader returns the name of the stream's leader once it has one and
// both replicas are current, or an error that says what is not yet so.
func ReadyLeader(ctx context.Context, st jetstream.Stream) (string, error) {
	info, err := st.Info(ctx)
	if err != nil {
		return "", err
	}
	cl := info.Cluster
	if cl == nil || cl.Leader == "" || len(cl.Replicas) != 2 {
		return "", fmt.Errorf("cluster %+v", cl)
	}
	for _, r := range cl.Replicas {
		if !r.Current || r.Offline {
			return "", fmt.Errorf("replica %+v", r)
		}
	}
	return cl.Leader, nil
}

// readAll reads every message of the stream through an ordered consumer
// and counts each value.
func readAll(ctx context.Context, st jetstream.Stream) (map[Value]int, uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var info *jetstream.StreamInfo
	var cons jetstream.Consumer
	if err := until(ctx, "the stream's info and an ordered consumer", func(ctx context.Context) (err error) {
		if info, err = st.Info(ctx); err != nil {
			return err
		}
		cons, err = st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
		return err
	}); err != nil {
		return nil, 0, err
	}
	want := info.State.Msgs
	counts := make(map[Value]int, want)
	var n uint64
	for n < want {
		if ctx.Err() != nil {
			return nil, 0, fmt.Errorf("crash: read %d of %d messages: %w", n, want, ctx.Err())
		}
		batch, err := cons.Fetch(int(min(want-n, 5000)), jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			continue // the ordered consumer recreates itself
		}
		for m := range batch.Messages() {
			v, err := decode(m.Data())
			if err != nil {
				v = Value{Producer: -1}
			}
			counts[v]++
			n++
		}
	}
	return counts, n, nil
}
