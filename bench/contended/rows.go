package main

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"time"

	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/chanring"
	"github.com/shardedsink/shardedsink/ring/mutex"
	"github.com/shardedsink/shardedsink/ring/vyukov"
	"github.com/shardedsink/shardedsink/sink"
)

// impl is one row family of the table: an implementation measured at every
// producer count.
type impl struct {
	name string
	// caveat is printed under the markdown table and stored in the JSON;
	// empty for the rows that need none.
	caveat string
	// build returns a fresh instance sized so that the whole burst fits.
	build func(sz sizing) (instance, error)
	// maxPer, when set, caps the items per producer at a producer count and
	// shard count (zenq's 65,536-slot limit).
	maxPer func(producers, shards int) int
	// spurious marks rows whose push can fail without the queue being full
	// (xsync, Workiva): their drop % shows contention, not overflow.
	spurious bool
	// backend is the ring of a sharded sink row; shed rows are measured for
	// the rows that have one.
	backend ring.Factory[Event]
	// notes, when set, reports what was observed during the run (diode
	// collisions, for instance), appended to the caveat.
	notes func() []string
}

// extraSharded holds sharded rows that build tags add (sharded-zenq).
var extraSharded []*impl

// buildFlags are the go command flags the binary was built with, for the
// command line printed above the table.
var buildFlags string

// drainBatch is the batch size of every drain: the sink's BatchSize and the
// number of values a baseline's consumer takes before it yields.
const drainBatch = 256

// idleSleep is how long a baseline's consumer sleeps when its queue is
// empty, the original's idle sleep (about 1 ms in practice on Linux, see
// go-peers §11).
const idleSleep = 100 * time.Microsecond

// impls returns every row family in table order.
func impls() []*impl {
	all := []*impl{
		shardedImpl("sharded-vyukov", vyukov.Factory[Event]),
		shardedImpl("sharded-mutex", mutex.Factory[Event]),
		shardedImpl("sharded-chanring", chanring.Factory[Event]),
	}
	all = append(all, extraSharded...)
	all = append(all,
		unshardedImpl(),
		singleRingImpl("single-vyukov", vyukov.Factory[Event]),
		singleRingImpl("single-mutex", mutex.Factory[Event]),
		singleChanImpl(),
		xsyncImpl(),
		workivaImpl(),
		diodesImpl(),
		lscqImpl(),
	)
	return all
}

// selectImpls returns the row families named in a comma-separated list, in
// table order, or all of them for an empty list.
func selectImpls(list string) ([]*impl, error) {
	all := impls()
	if strings.TrimSpace(list) == "" {
		return all, nil
	}
	want := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !knownImpl(all, name) {
			if name == "sharded-zenq" {
				return nil, fmt.Errorf("-impls: sharded-zenq needs the zenq build: go run -tags zenq -ldflags=-checklinkname=0 ./bench/contended")
			}
			return nil, fmt.Errorf("-impls: unknown implementation %q (want some of %s)", name, strings.Join(implNames(all), ","))
		}
		want[name] = true
	}
	var out []*impl
	for _, im := range all {
		if want[im.name] {
			out = append(out, im)
		}
	}
	return out, nil
}

func knownImpl(all []*impl, name string) bool {
	for _, im := range all {
		if im.name == name {
			return true
		}
	}
	return false
}

func implNames(all []*impl) []string {
	names := make([]string, len(all))
	for i, im := range all {
		names[i] = im.name
	}
	return names
}

// shardedImpl is the sharded sink on one backend: sz.shards shards, a handle
// per producer.
func shardedImpl(name string, f ring.Factory[Event]) *impl {
	return &impl{
		name:    name,
		backend: f,
		build: func(sz sizing) (instance, error) {
			return newSinkInstance(name, sz.shards, shardedCapacity(sz.producers, sz.shards, sz.per), f)
		},
	}
}

// unshardedImpl is the sink with one shard: one ring, global FIFO.
func unshardedImpl() *impl {
	return &impl{
		name: "unsharded-vyukov",
		build: func(sz sizing) (instance, error) {
			return newSinkInstance("unsharded-vyukov", 1, singleCapacity(sz.producers, sz.per), vyukov.Factory[Event])
		},
	}
}

// singleRingImpl is one ring of a backend shared by every producer, with one
// consumer goroutine.
func singleRingImpl(name string, f ring.Factory[Event]) *impl {
	return &impl{
		name: name,
		build: func(sz sizing) (instance, error) {
			r := f(singleCapacity(sz.producers, sz.per))
			prefault(r)
			return &queueInstance{
				push:    r.TryPush,
				drainer: startDrainer(func() bool { _, ok := r.TryPop(); return ok }),
			}, nil
		},
	}
}

// singleChanImpl is one buffered channel with select-default pushes: the
// OpenTelemetry BatchSpanProcessor pattern. Its consumer blocks on the
// channel as the BSP's does, so a push may find it parked and wake it.
func singleChanImpl() *impl {
	return &impl{
		name:   "single-chan",
		caveat: "one buffered channel, `select { case c <- v: default: }`, consumer blocked in a receive as in OpenTelemetry's BatchSpanProcessor: a push that finds the consumer parked hands off and wakes it",
		build: func(sz sizing) (instance, error) {
			c := make(chan Event, singleCapacity(sz.producers, sz.per))
			for range cap(c) { // fault in the buffer's pages before timing
				c <- Event{}
			}
			for range cap(c) {
				<-c
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				for range c {
				}
			}()
			return &chanInstance{c: c, done: done}, nil
		},
	}
}

// prefault fills r once and empties it again, so that every page of its
// slots is faulted in before the timed phase: otherwise a backend that
// allocates untouched memory (a channel, a plain slice) pays page faults in
// the timed loop that one which initialises its slots (vyukov) does not.
// It is bounded by Cap, so it ends even if something else pops concurrently.
func prefault(r ring.Ring[Event]) {
	n := r.Cap()
	for range n {
		if !r.TryPush(Event{}) {
			break
		}
	}
	for range n {
		if _, ok := r.TryPop(); !ok {
			break
		}
	}
}

// prefaulted wraps a factory so that every ring it makes is prefaulted.
func prefaulted(f ring.Factory[Event]) ring.Factory[Event] {
	return func(capacity int) ring.Ring[Event] {
		r := f(capacity)
		prefault(r)
		return r
	}
}

// queueInstance is a queue shared by every producer, with one consumer.
type queueInstance struct {
	push    pushFunc
	drainer *drainer
	onStop  func()
}

func (q *queueInstance) pusher() pushFunc { return q.push }

func (q *queueInstance) stop(ctx context.Context) error {
	err := q.drainer.stop(ctx)
	if q.onStop != nil {
		q.onStop()
	}
	return err
}

// chanInstance is the single channel and its blocked consumer.
type chanInstance struct {
	c    chan Event
	done chan struct{}
}

func (c *chanInstance) pusher() pushFunc {
	ch := c.c
	return func(ev Event) bool {
		select {
		case ch <- ev:
			return true
		default:
			return false
		}
	}
}

func (c *chanInstance) stop(ctx context.Context) error {
	close(c.c) // every producer has returned
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("channel consumer: %w", ctx.Err())
	}
}

// drainer is the one consumer goroutine of every baseline and peer row, as
// each sink shard has its drain worker: it takes up to drainBatch values,
// then yields; when the queue is empty it sleeps idleSleep.
type drainer struct {
	quit chan struct{}
	done chan struct{}
}

// startDrainer starts a consumer; pop removes one value and reports false
// when the queue is (or looks) empty.
func startDrainer(pop func() bool) *drainer {
	d := &drainer{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(d.done)
		for {
			n := 0
			for n < drainBatch && pop() {
				n++
			}
			if n > 0 {
				runtime.Gosched()
				continue
			}
			select {
			case <-d.quit:
				for pop() { // the producers are done: empty the queue
				}
				return
			default:
				time.Sleep(idleSleep)
			}
		}
	}()
	return d
}

// stop asks the consumer to empty the queue and return, and waits for it.
func (d *drainer) stop(ctx context.Context) error {
	close(d.quit)
	select {
	case <-d.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("consumer: %w", ctx.Err())
	}
}

// sinkIdle is the idle mode of the sink rows (the -idle flag): the sink's
// default, IdleWake, unless the run asks for the original's polling.
var sinkIdle = sink.IdleWake

// newSinkInstance builds a sink as the original harness configured it:
// shards shards of capacity slots on the backend f (prefaulted), batch 256,
// stealing off, a no-op drain, and an overload monitor that never fires
// during a run.
func newSinkInstance(name string, shards, capacity int, f ring.Factory[Event]) (instance, error) {
	s, err := sink.New[Event](sinkConfig(name, shards, capacity, f), sink.ActionFunc[Event](func(context.Context, []Event) {}))
	if err != nil {
		return nil, err
	}
	return &sinkInstance{s: s}, nil
}

func sinkConfig(name string, shards, capacity int, f ring.Factory[Event]) sink.Config[Event] {
	return sink.Config[Event]{
		Name:             name,
		Shards:           shards,
		RingCapacity:     capacity,
		BatchSize:        drainBatch,
		Ring:             prefaulted(f),
		OverloadInterval: time.Hour,
		OnOverload:       func(sink.Overload) {},
		Logger:           slog.New(slog.DiscardHandler),
		Idle:             sinkIdle,
		DisableStealing:  true,
	}
}

// sinkInstance is a sink whose producers each take a Handle.
type sinkInstance struct{ s *sink.Sink[Event] }

func (si *sinkInstance) pusher() pushFunc { return si.s.Handle().Push }

func (si *sinkInstance) stop(ctx context.Context) error { return si.s.Shutdown(ctx) }
