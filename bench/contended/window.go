package main

import (
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/internal/cputime"
)

// The measured window: how a trial makes its producers push at the same
// instant, fast rows and slow rows alike.
//
// A trial is a warm-up round and then measured rounds until their wall time
// adds up to the window (-window). In every round each producer, a
// goroutine locked to its own OS thread, waits on the round's start
// channel; one close releases them all, and only once every producer has
// locked its thread and reached the first start. Each producer then claims
// chunks of pushes from the round's shared budget (one atomic add per
// chunk, with a look at the round's deadline) until the budget is spent or
// the deadline has passed, and reads its thread's CPU clock around its
// part of the round.
//
// The budget is the round's size (-round), and every ring or queue of a
// row holds that many values plus the slack, so a held row never fills;
// between rounds the harness empties the rings outside the timing. Because
// budget and deadline are shared, every running producer stops within one
// chunk of the others: no producer pushes alone at the end, and while the
// round lasts GOMAXPROCS producers push at once (the scheduler hands the
// processors from one locked thread to the next, each running until it is
// preempted or the round ends). The old method gave every producer a fixed
// count of pushes instead, which fast rows finished before the scheduler
// had spread the producers over the processors: their producers ran one
// after another and their single queues never contended.
//
// Parallelism, the producers' CPU time over the rounds' wall time, shows
// how far that held; measure marks a row whose parallelism falls short as
// invalid.

// chunk is how many pushes a producer claims from a round's budget at a
// time: one atomic add on the budget's cache line, shared by every
// producer, per chunk, which is a tenth of a nanosecond per push at the
// fastest rows' 16 ns, and a deadline check (one monotonic clock reading)
// per chunk.
const chunk = 1024

// round is one round's shared budget and deadline. Its start channel
// releases the producers; next is the round they wait on afterwards, set
// before start is closed.
type round struct {
	_ [cacheLinePad]byte
	// claimed is the pushes handed out so far (a multiple of chunk): the
	// only word the producers write during the round.
	claimed atomic.Int64
	_       [cacheLinePad - 8]byte

	// deadline is when the round ends, in nanoseconds of the monotonic
	// clock since epoch: 0 until the first claim sets it to that instant
	// plus length, so that the time the first producer takes to wake up
	// does not shorten the round. No chunk is claimed after it.
	deadline atomic.Int64
	_        [cacheLinePad - 8]byte

	// arrived counts the producers spinning at the round's start line at
	// this instant, each on a processor of its own; started is set once
	// as many as can push at once (need) have been there together.
	arrived atomic.Int64
	_       [cacheLinePad - 8]byte
	started atomic.Bool
	need    int64

	limit  int64         // the budget: pushes that may be claimed
	length time.Duration // the round's duration from its first claim
	start  chan struct{}
	next   *round
	stop   bool    // the producers return instead of pushing
	timed  bool    // the round counts (false: warm-up)
	lat    []int64 // the tail run's latencies, indexed by claimed position; nil otherwise
	done   sync.WaitGroup
}

// claim hands out the next chunk of the budget: positions [lo, hi). It
// reports false once the budget is spent or the deadline has passed.
func (r *round) claim() (lo, hi int64, ok bool) {
	now := int64(time.Since(epoch))
	d := r.deadline.Load()
	if d == 0 {
		r.deadline.CompareAndSwap(0, now+int64(r.length))
		d = r.deadline.Load()
	}
	if now >= d {
		return 0, 0, false
	}
	hi = r.claimed.Add(chunk)
	lo = hi - chunk
	if lo >= r.limit {
		return 0, 0, false
	}
	return lo, min(hi, r.limit), true
}

// startLine holds a producer until need producers have been spinning at
// once, each on its own processor, so that the round starts with
// GOMAXPROCS producers pushing together: the Go scheduler may take a
// while to start a released goroutine on an idle processor, and a round
// whose second producer starts late would measure one producer alone.
// A producer spins at most spinAtLine, then leaves the line and yields,
// so that a processor that runs producers one after another lets the
// scheduler wake an idle one; the round is started by whoever sees need
// producers there, and the producers that come later pass at once.
func (r *round) startLine() {
	for !r.started.Load() {
		if r.arrived.Add(1) >= r.need {
			r.started.Store(true)
			r.arrived.Add(-1)
			return
		}
		for t0 := time.Now(); time.Since(t0) < spinAtLine; {
			if r.started.Load() || r.arrived.Load() >= r.need {
				r.started.Store(true)
				r.arrived.Add(-1)
				return
			}
		}
		r.arrived.Add(-1)
		runtime.Gosched()
	}
}

// spinAtLine is how long a producer waits at the start line before it
// yields its processor: far below the scheduler's 10 ms slice, so that
// it is not preempted while it counts as arrived, and above the time the
// scheduler takes to start a goroutine on an idle processor when all goes
// well (tens of µs).
const spinAtLine = 200 * time.Microsecond

// epoch is the origin of the rounds' deadlines on the monotonic clock.
var epoch = time.Now()

// unlimited is the budget of a round whose pushes are all rejected (the
// shed rows): only the deadline ends it.
const unlimited = math.MaxInt64 / 2

// producer is one producer of a trial: its push function and what it
// measured in the round that ended last.
type producer[T any] struct {
	id   int
	push func(T) bool
	n    int // pushes made so far in the trial: the low bits of their ids

	// Set by the producer during a round, read by the harness after it.
	pushed     bool // the producer claimed at least one chunk
	start, end time.Time
	cpu        time.Duration
	attempted  int64
	accepted   int64
	err        error
}

// runRound is the producer's part of round r: claim, push, repeat, with
// its thread's CPU clock read around the whole of it. In the tail run
// every push is bracketed by two wall-clock readings instead, written to
// r.lat at the push's claimed position.
func (p *producer[T]) runRound(r *round) {
	p.pushed, p.attempted, p.accepted, p.cpu, p.err = false, 0, 0, 0, nil
	r.startLine()
	lo, hi, ok := r.claim()
	if !ok {
		return
	}
	p.pushed = true
	p.start = time.Now()
	c0, err0 := cputime.Thread()
	var accepted int64
	for ok {
		if r.lat != nil {
			for i := lo; i < hi; i++ {
				v := value[T](eventID(p.id, p.n))
				t := time.Now()
				if p.push(v) {
					accepted++
				}
				r.lat[i] = int64(time.Since(t)) // monotonic clock
				p.n++
			}
		} else {
			for range hi - lo {
				if p.push(value[T](eventID(p.id, p.n))) {
					accepted++
				}
				p.n++
			}
		}
		p.attempted += hi - lo
		lo, hi, ok = r.claim()
	}
	c1, err1 := cputime.Thread()
	p.end = time.Now()
	p.cpu = c1 - c0
	p.accepted = accepted
	p.err = firstErr(err0, err1)
}

// crew is the producers of one trial, each parked on its own locked OS
// thread between rounds.
type crew[T any] struct {
	producers []*producer[T]
	next      *round // the round the producers wait on now
	procs     int    // GOMAXPROCS: at most this many producers can push at once
	exited    sync.WaitGroup
}

// startCrew starts one producer per push function and returns once each
// runs on its own locked OS thread and waits for the first round. With rt,
// each thread runs under SCHED_RR (realtime), or under the default policy
// where the process may not set it: then err says why.
func startCrew[T any](pushers []func(T) bool, rt bool) (c *crew[T], err error) {
	c = &crew[T]{next: newRound(), procs: runtime.GOMAXPROCS(0)}
	var rtErr atomic.Pointer[error]
	var ready sync.WaitGroup
	ready.Add(len(pushers))
	c.exited.Add(len(pushers))
	for i, push := range pushers {
		p := &producer[T]{id: i, push: push}
		c.producers = append(c.producers, p)
		r := c.next
		go func() {
			defer c.exited.Done()
			runtime.LockOSThread()
			if rt {
				// Never unlocked: the thread ends with the goroutine, so
				// that no thread of the Go runtime keeps the policy.
				if err := realtime(); err != nil {
					rtErr.CompareAndSwap(nil, &err)
				}
			} else {
				defer runtime.UnlockOSThread()
			}
			ready.Done()
			for {
				<-r.start
				if r.stop {
					return
				}
				p.runRound(r)
				next := r.next // set before r.start was closed
				r.done.Done()
				r = next
			}
		}()
	}
	ready.Wait()
	if e := rtErr.Load(); e != nil {
		err = *e
	}
	return c, err
}

func newRound() *round { return &round{start: make(chan struct{})} }

// play releases the next round with the given budget and duration and
// returns once every producer has finished its part of it.
func (c *crew[T]) play(limit int64, d time.Duration, timed bool, lat []int64) *round {
	r := c.next
	c.next = newRound()
	r.next = c.next
	r.limit, r.timed, r.lat = limit, timed, lat
	r.done.Add(len(c.producers))
	r.need = int64(min(len(c.producers), c.procs))
	r.length = d
	close(r.start)
	r.done.Wait()
	return r
}

// finish stops the producers and waits until every one has returned.
func (c *crew[T]) finish() {
	r := c.next
	r.stop = true
	close(r.start)
	c.exited.Wait()
}

// roundResult is what the producers measured in one round.
type roundResult struct {
	cpu       time.Duration // Σ thread CPU of the producers that pushed
	wall      time.Duration // first start to last end
	overlap   time.Duration // ∫ min(producers inside the round, procs) dt / procs (overlapOf)
	attempted int64
	accepted  int64
	err       error
}

// result folds the producers' parts of the round that just ended.
func (c *crew[T]) result() roundResult {
	var rr roundResult
	var first, last time.Time
	for _, p := range c.producers {
		if !p.pushed {
			continue
		}
		if p.err != nil && rr.err == nil {
			rr.err = p.err
		}
		rr.cpu += p.cpu
		rr.attempted += p.attempted
		rr.accepted += p.accepted
		if first.IsZero() || p.start.Before(first) {
			first = p.start
		}
		if p.end.After(last) {
			last = p.end
		}
	}
	if !first.IsZero() {
		rr.wall = last.Sub(first)
	}
	rr.overlap = overlapOf(c.producers, min(len(c.producers), c.procs))
	return rr
}

// overlapOf is how long, in processor-widths, the producers that pushed in
// the round were inside it (between their first claim and their last push,
// running or not) procs at a time: ∫ min(inside(t), procs) dt / procs over
// the round's wall time. Overlap over wall near 1 says the harness released
// them together and they stopped together; a row whose parallelism is low
// all the same lost the processors to its own waits (a yield, a parked
// goroutine), not to the release.
func overlapOf[T any](producers []*producer[T], procs int) time.Duration {
	type event struct {
		at    time.Time
		delta int
	}
	var events []event
	for _, p := range producers {
		if p.pushed {
			events = append(events, event{p.start, +1}, event{p.end, -1})
		}
	}
	slices.SortFunc(events, func(a, b event) int { return a.at.Compare(b.at) })
	var sum time.Duration
	inside := 0
	for i, e := range events {
		if i > 0 {
			sum += time.Duration(min(inside, procs)) * e.at.Sub(events[i-1].at)
		}
		inside += e.delta
	}
	return sum / time.Duration(max(procs, 1))
}
