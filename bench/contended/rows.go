package main

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/chanring"
	"github.com/shardedsink/shardedsink/ring/mutex"
	"github.com/shardedsink/shardedsink/ring/vyukov"
	"github.com/shardedsink/shardedsink/sink"
)

// impl is one row family of the table: an implementation measured at every
// producer count.
type impl[T any] struct {
	name string
	// caveat is printed under the markdown table and stored in the JSON;
	// empty for the rows that need none.
	caveat string
	// setup allocates and pre-touches the memory of one row, sized so that
	// the whole burst fits.
	setup func(sz sizing, mode consumerMode) (rowSetup[T], error)
	// maxRound, when not 0, caps the pushes per round (zenq's 65,536-slot
	// rings).
	maxRound int
	// spurious marks rows whose push can fail without the queue being full
	// (xsync, Workiva): their drop % shows contention, not overflow.
	spurious bool
	// backend is the ring of a sharded sink row; shed rows are measured for
	// the rows that have one.
	backend ring.Factory[T]
	// notes, when set, reports what was observed during the run (diode
	// collisions, for instance), appended to the caveat.
	notes func() []string
	// drainingOnly marks a row measured only with consumers draining:
	// one whose rings cannot hold a round, which held consumers would
	// turn into a table of refusals.
	drainingOnly bool
}

// drainBatch is the batch size of every consumer: the sink's BatchSize and
// the number of values a queue's consumer takes before it yields.
const drainBatch = 256

// idleSleep is how long every consumer sleeps when its queue is empty, in
// draining mode: the original's 100 µs (about 1 ms in practice on small
// Linux VMs). Sink rows get it as IdlePoll's IdleSleep, so that the sink's
// workers and the queues' consumers follow one policy.
const idleSleep = 100 * time.Microsecond

// implNames lists every row family in table order, as this build has them.
func implNames() []string {
	all := impls[uint64]()
	names := make([]string, len(all))
	for i, im := range all {
		names[i] = im.name
	}
	return names
}

// impls returns every row family in table order for payload type T.
func impls[T any]() []*impl[T] {
	all := []*impl[T]{
		pushImpl[T](),
		shardedImpl("sharded-vyukov", vyukov.Factory[T]),
		shardedImpl("sharded-mutex", mutex.Factory[T]),
		shardedImpl("sharded-chanring", chanring.Factory[T]),
	}
	all = append(all, extraSharded[T]()...)
	all = append(all,
		notifyImpl[T](),
		defaultImpl[T](),
		allDefaultsImpl[T](),
		unshardedImpl[T](),
		singleRingImpl("single-vyukov", vyukov.Factory[T]),
		singleRingImpl("single-mutex", mutex.Factory[T]),
		singleChanImpl[T](),
		xsyncImpl[T](),
		workivaImpl[T](),
		diodesImpl[T](),
		lscqImpl[T](),
	)
	return all
}

// selectNames checks a comma-separated list of row names and returns them
// in table order, or all of them for an empty list.
func selectNames(list string) ([]string, error) {
	all := implNames()
	if strings.TrimSpace(list) == "" {
		return all, nil
	}
	want := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !contains(all, name) {
			if name == "sharded-zenq" {
				return nil, fmt.Errorf("-impls: sharded-zenq needs the zenq build: bash bench/contended/run.sh, or go run -tags zenq -ldflags=-checklinkname=0 ./bench/contended")
			}
			return nil, fmt.Errorf("-impls: unknown implementation %q (want some of %s)", name, strings.Join(all, ","))
		}
		want[name] = true
	}
	var out []string
	for _, name := range all {
		if want[name] {
			out = append(out, name)
		}
	}
	return out, nil
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// shardedImpl is the sharded sink on one backend as the original harness
// configured it: sz.shards shards, a Handle per producer, batch 256,
// stealing off, an overload monitor that never fires during a run.
func shardedImpl[T any](name string, f ring.Factory[T]) *impl[T] {
	return &impl[T]{
		name:    name,
		backend: f,
		setup: func(sz sizing, mode consumerMode) (rowSetup[T], error) {
			return newSinkRow(name, sz.shards, ringCapacity(sz.round), f, mode, false)
		},
	}
}

// pushImpl is the headline row: the sink with its default Config (default
// shard count, work stealing on, IdleWake, vyukov rings), producers calling
// the handle-less Sink.Push, which takes its home ring from the CPU where
// it can (see sink.DefaultShards). Every ring holds a whole round, so that
// drop % stays 0 whichever rings the CPUs choose.
func pushImpl[T any]() *impl[T] {
	return &impl[T]{
		name: "sharded-push",
		caveat: "the sink's default Config (sink.DefaultShards() shards: a ring per CPU where Push reads the CPU " +
			"number, linux/amd64 with RDPID; work stealing on, IdleWake, vyukov rings), producers calling the " +
			"handle-less Sink.Push; RingCapacity set so that any one ring holds a whole round. When draining, its " +
			"workers park on the doorbell when idle, as sharded-default's",
		setup: func(sz sizing, mode consumerMode) (rowSetup[T], error) {
			shards := defaultShards()
			r, err := newSinkRow("sharded-push", shards, ringCapacity(sz.round), vyukov.Factory[T], mode, true)
			if err != nil {
				return nil, err
			}
			r.handleless = true
			return r, nil
		},
	}
}

// defaultImpl is the sink with its default Config: default shard count
// (sink.DefaultShards), work stealing on, IdleWake, the default ring, and a
// Handle per producer. Only RingCapacity is set, so that a round fits.
func defaultImpl[T any]() *impl[T] {
	return &impl[T]{
		name: "sharded-default",
		caveat: "the sink's default Config (default shard count, work stealing on, IdleWake, vyukov rings, default monitor) " +
			"with only RingCapacity set so that a round fits; a Handle per producer. When draining, its workers " +
			"park on the doorbell when idle, so it does not follow the IdlePoll policy of the other rows",
		setup: func(sz sizing, mode consumerMode) (rowSetup[T], error) {
			shards := defaultShards()
			return newSinkRow("sharded-default", shards, ringCapacity(sz.round), vyukov.Factory[T], mode, true)
		},
	}
}

// allDefaultsImpl is what a user gets without tuning: the sink with every
// field of its Config at its default (8,192-slot rings among them), its
// workers draining, producers calling Sink.Push. Its rings do not hold a
// round, so a push the workers cannot keep up with parks for them
// (the hand-off) or is refused: drop % is the share refused.
func allDefaultsImpl[T any]() *impl[T] {
	return &impl[T]{
		name: "sharded-push-defaults",
		caveat: "every field of the sink's Config at its default (" + strconv.Itoa(sink.DefaultRingCapacity) + "-slot rings, " +
			"which do not hold a round; the hand-off on), producers calling the handle-less Sink.Push; measured with " +
			"consumers draining only (held, nearly every push would be refused)",
		drainingOnly: true,
		setup: func(sz sizing, mode consumerMode) (rowSetup[T], error) {
			r, err := newSinkRow("sharded-push-defaults", defaultShards(), sink.DefaultRingCapacity, vyukov.Factory[T], mode, true)
			if err != nil {
				return nil, err
			}
			r.handleless = true
			return r, nil
		},
	}
}

// defaultShards asks the sink for its default shard count.
func defaultShards() int {
	s := sink.MustNew(sink.Config[uint64]{}, sink.ActionFunc[uint64](func(context.Context, []uint64) {}))
	n := s.Shards()
	_ = s.Shutdown(context.Background())
	return n
}

// unshardedImpl is the sink with one shard: one ring, global FIFO.
func unshardedImpl[T any]() *impl[T] {
	return &impl[T]{
		name: "unsharded-vyukov",
		setup: func(sz sizing, mode consumerMode) (rowSetup[T], error) {
			return newSinkRow("unsharded-vyukov", 1, ringCapacity(sz.round), vyukov.Factory[T], mode, false)
		},
	}
}

// singleRingImpl is one ring of a backend shared by every producer.
func singleRingImpl[T any](name string, f ring.Factory[T]) *impl[T] {
	return &impl[T]{
		name: name,
		setup: func(sz sizing, mode consumerMode) (rowSetup[T], error) {
			r := f(ringCapacity(sz.round))
			prefault(r)
			return &queueRow[T]{mode: mode, push: r.TryPush, pop: func() bool { _, ok := r.TryPop(); return ok }}, nil
		},
	}
}

// singleChanImpl is one buffered channel with select-default pushes: the
// OpenTelemetry BatchSpanProcessor pattern.
func singleChanImpl[T any]() *impl[T] {
	return &impl[T]{
		name:   "single-chan",
		caveat: "one buffered channel, `select { case c <- v: default: }`, the push of OpenTelemetry's BatchSpanProcessor; its consumer receives with select-default under the common policy",
		setup: func(sz sizing, mode consumerMode) (rowSetup[T], error) {
			c := make(chan T, ringCapacity(sz.round))
			for range cap(c) { // fault in the buffer's pages before timing
				c <- *new(T)
			}
			for range cap(c) {
				<-c
			}
			return &queueRow[T]{
				mode: mode,
				push: func(v T) bool {
					select {
					case c <- v:
						return true
					default:
						return false
					}
				},
				pop: func() bool {
					select {
					case <-c:
						return true
					default:
						return false
					}
				},
			}, nil
		},
	}
}

// prefault fills r and empties it again, so that every page of its slots is
// faulted in before the timed phase, then pushes and pops one value at a
// time until the positions have gone once round the next power of two: a
// backend that rounds its slots up (zenq) cycles through all of them, the
// rounded-up ones included. It is bounded by Cap.
func prefault[T any](r ring.Ring[T]) {
	n := r.Cap()
	for range n {
		if !r.TryPush(*new(T)) {
			break
		}
	}
	for range n {
		if _, ok := r.TryPop(); !ok {
			break
		}
	}
	for range nextPow2(n) - n {
		if !r.TryPush(*new(T)) {
			break
		}
		r.TryPop()
	}
}

// nextPow2 is the smallest power of two >= n (n >= 1).
func nextPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

// queueRow is a queue shared by every producer, with at most one consumer.
type queueRow[T any] struct {
	mode consumerMode
	push func(T) bool
	pop  func() bool // removes one value; false when the queue is empty
	// onStart and onStop, when set, run as each trial starts and stops.
	onStart, onStop func()
}

func (q *queueRow[T]) trial() (instance[T], error) {
	qi := &queueInstance[T]{row: q}
	if q.onStart != nil {
		q.onStart()
	}
	if q.mode == draining {
		qi.d = startDrainer(q.pop)
	}
	return qi, nil
}

// queueInstance is one trial of a queue row.
type queueInstance[T any] struct {
	row *queueRow[T]
	d   *drainer // nil when held
}

func (q *queueInstance[T]) pusher() func(T) bool { return q.row.push }

func (q *queueInstance[T]) consumed() int64 {
	if q.d == nil {
		return 0
	}
	return q.d.popped.Load()
}

func (q *queueInstance[T]) empty(ctx context.Context, accepted int64) error {
	if q.d == nil {
		for q.row.pop() {
		}
		return nil
	}
	return waitConsumed(ctx, q.consumed, accepted)
}

// waitConsumed waits until consumed reports at least accepted values, or
// ctx ends.
func waitConsumed(ctx context.Context, consumed func() int64, accepted int64) error {
	for consumed() < accepted {
		select {
		case <-ctx.Done():
			return fmt.Errorf("the consumers took %d of %d values between rounds: %w", consumed(), accepted, ctx.Err())
		case <-time.After(50 * time.Microsecond):
		}
	}
	return nil
}

func (q *queueInstance[T]) stop(ctx context.Context) error {
	var err error
	if q.d != nil {
		err = q.d.stop(ctx)
	} else {
		for q.row.pop() { // held: the producers are done, empty the queue
		}
	}
	if q.row.onStop != nil {
		q.row.onStop()
	}
	return err
}

// drainer is the consumer goroutine of a queue row in draining mode, with
// the sink workers' IdlePoll policy: it takes up to drainBatch values, then
// yields; when the queue is empty it sleeps idleSleep.
type drainer struct {
	quit   chan struct{}
	done   chan struct{}
	popped atomic.Int64
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
				d.popped.Add(int64(n))
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

// primeWait bounds the wait for held workers to block in Drain.
const primeWait = 10 * time.Second

// sinkRow is the rings of a sink row. Shutdown closes a sink's rings, so
// every trial after the first gets fresh ones, made and pre-touched before
// the trial (the garbage of the last is collected before it starts).
type sinkRow[T any] struct {
	name       string
	shards     int
	capacity   int
	factory    ring.Factory[T]
	rings      []ring.Ring[T]
	used       bool // a trial's sink has had (and closed) the rings
	mode       consumerMode
	isDefault  bool
	handleless bool // producers call Sink.Push (sharded-push)
}

// newSinkRow makes and pre-touches the shards rings of capacity slots.
func newSinkRow[T any](name string, shards, capacity int, f ring.Factory[T], mode consumerMode, isDefault bool) (*sinkRow[T], error) {
	r := &sinkRow[T]{name: name, shards: shards, capacity: capacity, factory: f, mode: mode, isDefault: isDefault}
	if err := r.makeRings(); err != nil {
		return nil, err
	}
	return r, nil
}

// makeRings replaces the row's rings with fresh, pre-touched ones.
func (r *sinkRow[T]) makeRings() error {
	r.rings = make([]ring.Ring[T], 0, r.shards)
	for range r.shards {
		rg := r.factory(r.capacity)
		if rg.Cap() != r.capacity {
			return fmt.Errorf("ring factory made a ring of %d slots, want %d", rg.Cap(), r.capacity)
		}
		prefault(rg)
		r.rings = append(r.rings, rg)
	}
	return nil
}

// config is the sink's Config for one trial: its Ring hands out the row's
// rings in order.
func (r *sinkRow[T]) config() sink.Config[T] {
	next := 0
	factory := func(capacity int) ring.Ring[T] {
		if next >= len(r.rings) || capacity != r.rings[next].Cap() {
			panic(fmt.Sprintf("contended: %s: the sink asked for ring %d of %d slots; the row has %d rings of %d",
				r.name, next, capacity, len(r.rings), r.rings[0].Cap()))
		}
		rg := r.rings[next]
		next++
		return rg
	}
	if r.isDefault {
		return sink.Config[T]{Name: r.name, RingCapacity: r.rings[0].Cap(), Ring: factory}
	}
	return sink.Config[T]{
		Name:             r.name,
		Shards:           r.shards,
		RingCapacity:     r.rings[0].Cap(),
		BatchSize:        drainBatch,
		Ring:             factory,
		OverloadInterval: time.Hour,
		OnOverload:       func(sink.Overload) {},
		Idle:             sinkIdle,
		IdleSleep:        sinkIdleSleep(),
		DisableStealing:  true,
		// The table compares pushes that shed with the other queues',
		// which shed too: a push into a full ring does not park for the
		// worker here (sharded-default keeps the default, which does).
		DisableHandOff: true,
	}
}

// sinkIdle is the idle mode of the sink rows other than sharded-default (the
// -idle flag): IdlePoll, the common policy, unless a run asks for the
// doorbell to compare.
var sinkIdle = sink.IdlePoll

// sinkIdleSleep is idleSleep in IdlePoll mode and the sink's default
// recheck in IdleWake mode.
func sinkIdleSleep() time.Duration {
	if sinkIdle == sink.IdlePoll {
		return idleSleep
	}
	return 0
}

func (r *sinkRow[T]) trial() (instance[T], error) {
	if r.used {
		if err := r.makeRings(); err != nil {
			return nil, err
		}
	}
	r.used = true
	si := &sinkInstance[T]{gate: make(chan struct{}), rings: r.rings, handleless: r.handleless}
	if r.mode == draining {
		close(si.gate) // an open gate: Drain returns at once
		si.open = true
	}
	action := sink.ActionFunc[T](func(ctx context.Context, batch []T) {
		si.popped.Add(int64(len(batch)))
		select {
		case <-si.gate:
			return
		default:
		}
		si.entered.Add(1)
		select {
		case <-si.gate:
		case <-ctx.Done():
		}
	})
	s, err := sink.New(r.config(), action)
	if err != nil {
		return nil, err
	}
	si.s = s
	if r.mode == held {
		if err := si.hold(); err != nil {
			_ = stopInstance[T](si)
			return nil, err
		}
	}
	si.base = si.popped.Load()
	return si, nil
}

// sinkInstance is one trial's sink.
type sinkInstance[T any] struct {
	s          *sink.Sink[T]
	handleless bool // producers call s.Push instead of a Handle's
	rings      []ring.Ring[T]
	gate       chan struct{} // Drain waits on it while held
	open       bool
	popped     atomic.Int64 // values handed to Drain
	entered    atomic.Int64 // workers blocked in Drain
	base       int64        // popped when the trial was ready
}

// hold blocks every worker in a Drain call before the producers start: it
// pushes one value into each shard whose ring is empty until every worker
// has taken a batch and entered Drain, where it waits on the gate. With
// stealing on, a worker may take another shard's value first; that shard
// then gets another one. At most a few values per shard stay in the rings,
// well within the slack.
func (si *sinkInstance[T]) hold() error {
	n := si.s.Shards()
	handles := make([]*sink.Handle[T], n) // n consecutive handles cover every shard
	for i := range handles {
		handles[i] = si.s.Handle()
	}
	deadline := time.Now().Add(primeWait)
	for si.entered.Load() < int64(n) {
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d drain workers blocked within %v", si.entered.Load(), n, primeWait)
		}
		st := si.s.Stats()
		for i, h := range handles {
			if st.PerShard[h.Shard()].Queued == 0 {
				handles[i].Push(value[T](^uint64(0)))
			}
		}
		time.Sleep(200 * time.Microsecond)
	}
	return nil
}

// pusher returns the push of one producer: a Handle of its own (round
// robin), or the sink's handle-less Push for sharded-push.
func (si *sinkInstance[T]) pusher() func(T) bool {
	if si.handleless {
		return si.s.Push
	}
	return si.s.Handle().Push
}

func (si *sinkInstance[T]) consumed() int64 { return si.popped.Load() - si.base }

// empty pops what the round left in the rings while the workers wait in
// Drain (held), or waits for the workers to take it (draining).
func (si *sinkInstance[T]) empty(ctx context.Context, accepted int64) error {
	if si.open {
		return waitConsumed(ctx, si.consumed, accepted)
	}
	for _, r := range si.rings {
		for {
			if _, ok := r.TryPop(); !ok {
				break
			}
		}
	}
	return nil
}

// stop opens the gate, shuts the sink down (its workers drain the rings)
// and checks that the rings are empty for the next trial.
func (si *sinkInstance[T]) stop(ctx context.Context) error {
	if !si.open {
		close(si.gate)
		si.open = true
	}
	if err := si.s.Shutdown(ctx); err != nil {
		return err
	}
	for i, r := range si.rings {
		if n := r.Len(); n != 0 {
			return fmt.Errorf("ring %d holds %d values after Shutdown", i, n)
		}
	}
	return nil
}
