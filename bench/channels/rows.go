package main

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/shardedsink/shardedsink/mpmc"
)

// A row of the original's table (zruntime benches/mpmc.rs, section 4 of the
// mpmc reference). "tasks" become goroutines; "threads" become goroutines
// each locked to its OS thread with runtime.LockOSThread.
type row struct {
	name string // the case id, as in the JSON and the go test benchmarks
	what string // what is timed, as the original's table says it

	// unit is what ns counts: "op" for the ping rows (one send+recv),
	// "round" for the burst rows (1024 try-sends then 1024 try-recvs), "run"
	// for the crews (every
	// message of every sender), "msg" for the row timed per message.
	unit string

	// Crews: senders and receivers, each receiver taking an equal share.
	senders, receivers int
	threads            bool
	capacity           int // 0: unbounded

	// single is set for the single-goroutine rows.
	single func(impl string, items int) time.Duration
	ops    func(items int) int // how many ops single times
}

// burst is the burst size of the burst rows: 1024 try-sends, then 1024
// try-receives.
const burst = 1024

var rows = []row{
	{name: "ping-bounded1", what: "send+recv, 1 goroutine, capacity 1", unit: "op",
		single: pingBounded, ops: func(items int) int { return items }},
	{name: "ping-unbounded", what: "send+recv, 1 goroutine, unbounded", unit: "op",
		single: pingUnbounded, ops: func(items int) int { return items }},
	{name: "burst-bounded1024", what: "1024 try-sends then 1024 try-recvs, capacity 1024", unit: "round",
		single: burstBounded, ops: bursts},
	{name: "burst-unbounded", what: "1024 try-sends then 1024 try-recvs, unbounded", unit: "round",
		single: burstUnbounded, ops: bursts},
	{name: "mpmc-4x4-threads-cap16", what: "4 sender and 4 receiver threads, capacity 16", unit: "run",
		senders: 4, receivers: 4, threads: true, capacity: 16},
	{name: "mpmc-4x4-threads-unbounded", what: "4 sender and 4 receiver threads, unbounded", unit: "run",
		senders: 4, receivers: 4, threads: true},
	{name: "mpsc-4to1-goroutines-cap16", what: "4 sender goroutines and 1 receiver goroutine, capacity 16", unit: "run",
		senders: 4, receivers: 1, capacity: 16},
	{name: "mpmc-4x4-goroutines-cap16", what: "4 sender and 4 receiver goroutines, capacity 16", unit: "run",
		senders: 4, receivers: 4, capacity: 16},
	{name: "spsc-goroutines-cap16-msg", what: "1 sender goroutine and 1 receiver goroutine, capacity 16, a message", unit: "msg",
		senders: 1, receivers: 1, capacity: 16},
	{name: "spsc-threads-cap16", what: "1 sender thread and 1 receiver thread, capacity 16", unit: "run",
		senders: 1, receivers: 1, threads: true, capacity: 16},
	{name: "spsc-threads-cap1024", what: "1 sender thread and 1 receiver thread, capacity 1024", unit: "run",
		senders: 1, receivers: 1, threads: true, capacity: 1024},
	{name: "mpsc-4to1-threads-cap16", what: "4 sender threads and 1 receiver thread, capacity 16", unit: "run",
		senders: 4, receivers: 1, threads: true, capacity: 16},
	// Beyond the original's table: the unbounded crew of goroutines, so
	// that both kinds of channel have a row with more goroutines than
	// processors.
	{name: "mpmc-4x4-goroutines-unbounded", what: "4 sender and 4 receiver goroutines, unbounded", unit: "run",
		senders: 4, receivers: 4},
}

func bursts(items int) int { return max(1, items/burst) }

// run times one trial of r for impl and returns nanoseconds per unit.
func (r row) run(impl string, items int) (float64, bool) {
	if r.single != nil {
		if !singleSupported(impl, r.name) {
			return 0, false
		}
		d := r.single(impl, items)
		return float64(d.Nanoseconds()) / float64(r.ops(items)), true
	}
	c, ok := newCrewChannel(impl, r.capacity, r.senders*items)
	if !ok {
		return 0, false
	}
	d := runCrew(c, r.senders, r.receivers, r.threads, items)
	ns := float64(d.Nanoseconds())
	if r.unit == "msg" {
		ns /= float64(r.senders * items)
	}
	return ns, true
}

// crewChannel is what a crew needs of a channel. The crews' cost is
// dominated by waiting, so one indirect call per message does not matter;
// the single-goroutine rows below call each implementation directly.
type crewChannel struct {
	// sender and receiver return the operation for one goroutine, and what
	// that goroutine calls when it is done.
	sender   func() (send func(uint64), done func())
	receiver func() (recv func() uint64, done func())
	// finish runs after the crew is done.
	finish func()
}

func newCrewChannel(impl string, capacity, total int) (crewChannel, bool) {
	switch impl {
	case "mpmc":
		var tx *mpmc.Sender[uint64]
		var rx *mpmc.Receiver[uint64]
		if capacity == 0 {
			tx, rx = mpmc.Unbounded[uint64]()
		} else {
			tx, rx = mpmc.Bounded[uint64](capacity)
		}
		ctx := context.Background()
		return crewChannel{
			// Each goroutine gets its own clone, as each thread does in
			// the original.
			sender: func() (func(uint64), func()) {
				s := tx.Clone()
				return func(v uint64) {
					if err := s.Send(ctx, v); err != nil {
						panic(err)
					}
				}, s.Release
			},
			receiver: func() (func() uint64, func()) {
				r := rx.Clone()
				return func() uint64 {
					v, err := r.Recv(ctx)
					if err != nil {
						panic(err)
					}
					return v
				}, r.Release
			},
			finish: func() { tx.Release(); rx.Release() },
		}, true
	case "chan":
		if capacity == 0 {
			capacity = total // a buffer that holds every message
		}
		c := make(chan uint64, capacity)
		nop := func() {}
		return crewChannel{
			sender: func() (func(uint64), func()) {
				return func(v uint64) { c <- v }, nop
			},
			receiver: func() (func() uint64, func()) {
				return func() uint64 { return <-c }, nop
			},
			finish: nop,
		}, true
	}
	return newCrewChannelExtra(impl, capacity, total)
}

// runCrew runs senders goroutines that send items values each, and
// receivers goroutines that share the messages equally, and returns the
// time from the start signal until the last message is received.
func runCrew(c crewChannel, senders, receivers int, threads bool, items int) time.Duration {
	total := senders * items
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	var sink uint64
	var sinkMu sync.Mutex
	for i := range senders {
		send, release := c.sender()
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			if threads {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
			}
			ready.Done()
			<-start
			base := uint64(i) << 32
			for k := range items {
				send(base | uint64(k))
			}
			release()
		}()
	}
	for j := range receivers {
		recv, release := c.receiver()
		share := total / receivers
		if j < total%receivers {
			share++
		}
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			if threads {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
			}
			ready.Done()
			<-start
			var sum uint64
			for range share {
				sum += recv()
			}
			release()
			sinkMu.Lock()
			sink += sum
			sinkMu.Unlock()
		}()
	}
	ready.Wait()
	t0 := time.Now()
	close(start)
	done.Wait()
	d := time.Since(t0)
	c.finish()
	_ = sink
	return d
}

// The single-goroutine rows, one loop per implementation so that no
// indirect call sits inside the timed loop.

func pingBounded(impl string, items int) time.Duration {
	switch impl {
	case "mpmc":
		tx, rx := mpmc.Bounded[uint64](1)
		defer tx.Release()
		defer rx.Release()
		return pingMpmc(tx, rx, items)
	case "chan":
		return pingChan(make(chan uint64, 1), items)
	}
	return pingExtra(impl, 1, items)
}

func pingUnbounded(impl string, items int) time.Duration {
	switch impl {
	case "mpmc":
		tx, rx := mpmc.Unbounded[uint64]()
		defer tx.Release()
		defer rx.Release()
		return pingMpmc(tx, rx, items)
	case "chan":
		// One message is in flight at a time, so a buffer of one holds
		// every message.
		return pingChan(make(chan uint64, 1), items)
	}
	return 0
}

func pingMpmc(tx *mpmc.Sender[uint64], rx *mpmc.Receiver[uint64], items int) time.Duration {
	ctx := context.Background()
	t0 := time.Now()
	for i := range items {
		if err := tx.Send(ctx, uint64(i)); err != nil {
			panic(err)
		}
		if _, err := rx.Recv(ctx); err != nil {
			panic(err)
		}
	}
	return time.Since(t0)
}

func pingChan(c chan uint64, items int) time.Duration {
	t0 := time.Now()
	for i := range items {
		c <- uint64(i)
		<-c
	}
	return time.Since(t0)
}

func burstBounded(impl string, items int) time.Duration {
	switch impl {
	case "mpmc":
		tx, rx := mpmc.Bounded[uint64](burst)
		defer tx.Release()
		defer rx.Release()
		return burstMpmc(tx, rx, bursts(items))
	case "chan":
		return burstChan(make(chan uint64, burst), bursts(items))
	}
	return burstExtra(impl, bursts(items))
}

func burstUnbounded(impl string, items int) time.Duration {
	switch impl {
	case "mpmc":
		tx, rx := mpmc.Unbounded[uint64]()
		defer tx.Release()
		defer rx.Release()
		return burstMpmc(tx, rx, bursts(items))
	case "chan":
		return burstChan(make(chan uint64, burst), bursts(items))
	}
	return 0
}

func burstMpmc(tx *mpmc.Sender[uint64], rx *mpmc.Receiver[uint64], n int) time.Duration {
	t0 := time.Now()
	for range n {
		for i := range burst {
			if tx.TrySend(uint64(i)) != nil {
				panic("mpmc: burst: TrySend failed")
			}
		}
		for range burst {
			if _, err := rx.TryRecv(); err != nil {
				panic(err)
			}
		}
	}
	return time.Since(t0)
}

func burstChan(c chan uint64, n int) time.Duration {
	t0 := time.Now()
	for range n {
		for i := range burst {
			select {
			case c <- uint64(i):
			default:
				panic("chan: burst: try-send failed")
			}
		}
		for range burst {
			select {
			case <-c:
			default:
				panic("chan: burst: try-recv failed")
			}
		}
	}
	return time.Since(t0)
}
