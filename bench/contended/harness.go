package main

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/shardedsink/shardedsink/bench/internal/report"
	"github.com/shardedsink/shardedsink/internal/cputime"
)

// Event is the value every row pushes: a 32-byte plain record without
// pointers, the shape of the original harness's TelemetryEvent (a 16-byte
// request id, a timestamp, a route, a status and flags).
type Event struct {
	RequestID [2]uint64
	Timestamp uint64
	Route     uint32
	Status    uint16
	Flags     uint16
}

// newEvent builds the event with the given id. Every field depends on id, so
// that each push carries a distinct value; the push itself goes through a
// function value into another package and its result is counted, which keeps
// the compiler from dropping it (Go has no black_box, and needs none here).
func newEvent(id uint64) Event {
	return Event{
		RequestID: [2]uint64{id, ^id},
		Timestamp: id,
		Route:     uint32(id),
		Status:    200,
		Flags:     uint16(id >> 40),
	}
}

// eventID is the original's id rule: the producer in the high bits, the
// push's index (warm-up pushes first) in the low 40.
func eventID(producer, i int) uint64 { return uint64(producer)<<40 | uint64(i) }

// pushFunc pushes one event and reports whether it was accepted.
type pushFunc func(Event) bool

// instance is one fresh instance of an implementation under test: a sink
// with its drain workers, or a queue with its one consumer goroutine.
type instance interface {
	// pusher returns the push function for the next producer. The harness
	// calls it once per producer, on its own goroutine, before the producers
	// start; a sink row takes a Handle here, so handles spread round-robin.
	pusher() pushFunc
	// stop runs once every producer has finished: it shuts the sink down or
	// stops the consumer, and releases what the instance holds.
	stop(ctx context.Context) error
}

// sizing is one run's shape: how many producers push how many values.
type sizing struct {
	producers int
	per       int // timed pushes per producer
	shards    int // shards of the sharded rows
}

// warmup is the number of untimed pushes each producer makes first: per/10.
func (s sizing) warmup() int { return s.per / 10 }

// burst is what one producer pushes in all: warm-up plus timed pushes.
func (s sizing) burst() int { return s.per + s.per/10 }

// slack is what every ring gets on top of the burst, as in the original.
const slack = 1024

// shardedCapacity is the per-shard ring capacity that holds the whole burst
// when producers take handles round-robin over shards: the busiest shard
// serves ceil(producers/shards) of them.
func shardedCapacity(producers, shards, per int) int {
	perShard := (producers + shards - 1) / shards
	return perShard*(per+per/10) + slack
}

// singleCapacity is the capacity of a single ring, or of a 1-shard sink, that
// holds the whole burst of every producer.
func singleCapacity(producers, per int) int {
	return producers*(per+per/10) + slack
}

// shutdownTimeout bounds each sink's Shutdown, as the original's 10 s.
const shutdownTimeout = 10 * time.Second

// trialResult is what one trial measured.
type trialResult struct {
	cpuNsPerOp float64 // Δcpu/per, averaged over producers
	throughput float64 // accepted timed pushes per second of the timed phase
	attempted  int64   // warm-up and timed pushes
	accepted   int64
}

// producerResult is what one producer measured in a trial.
type producerResult struct {
	cpu        time.Duration
	start, end time.Time
	attempted  int64
	accepted   int64 // warm-up and timed
	timedOK    int64 // timed only
	err        error
}

// runProducers starts n producers, each on its own locked OS thread, lets
// them all reach a barrier, releases them together, and waits for all of
// them. body runs on producer i's goroutine after the barrier.
func runProducers(n int, body func(i int)) {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(n)
	done.Add(n)
	for i := range n {
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			ready.Done()
			<-start
			body(i)
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
}

// produce is one producer's trial: per/10 warm-up pushes, then per timed
// pushes between two readings of the thread's CPU clock. The wall-clock
// readings that bound the timed phase sit outside the CPU window.
func produce(id int, push pushFunc, warm, per int) producerResult {
	var r producerResult
	for i := range warm {
		if push(newEvent(eventID(id, i))) {
			r.accepted++
		}
	}
	r.start = time.Now()
	c0, err0 := cputime.Thread()
	var ok int64
	for i := range per {
		if push(newEvent(eventID(id, warm+i))) {
			ok++
		}
	}
	c1, err1 := cputime.Thread()
	r.end = time.Now()
	r.cpu = c1 - c0
	r.err = firstErr(err0, err1)
	r.attempted = int64(warm + per)
	r.accepted += ok
	r.timedOK = ok
	return r
}

// runTrial measures one trial on a fresh instance.
func runTrial(im *impl, sz sizing) (trialResult, error) {
	inst, err := im.build(sz)
	if err != nil {
		return trialResult{}, fmt.Errorf("%s: %w", im.name, err)
	}
	t, err := runOn(inst, sz)
	if err != nil {
		return trialResult{}, fmt.Errorf("%s: %w", im.name, err)
	}
	return t, nil
}

// runOn runs the producers of one trial against inst, stops it, and
// summarises what they measured. The accept-path trials and the shed rows
// differ only in the instance they hand it.
func runOn(inst instance, sz sizing) (trialResult, error) {
	pushers := make([]pushFunc, sz.producers)
	for i := range pushers {
		pushers[i] = inst.pusher()
	}
	results := make([]producerResult, sz.producers)
	runProducers(sz.producers, func(i int) {
		results[i] = produce(i, pushers[i], sz.warmup(), sz.per)
	})
	if err := stopInstance(inst); err != nil {
		return trialResult{}, err
	}
	return summarizeTrial(results, sz.per)
}

// summarizeTrial folds the producers' results into one trial's numbers.
func summarizeTrial(results []producerResult, per int) (trialResult, error) {
	var t trialResult
	var cpu float64
	var timedOK int64
	first, last := results[0].start, results[0].end
	for _, r := range results {
		if r.err != nil {
			return trialResult{}, r.err
		}
		cpu += float64(r.cpu.Nanoseconds()) / float64(per)
		t.attempted += r.attempted
		t.accepted += r.accepted
		timedOK += r.timedOK
		if r.start.Before(first) {
			first = r.start
		}
		if r.end.After(last) {
			last = r.end
		}
	}
	t.cpuNsPerOp = cpu / float64(len(results))
	if wall := last.Sub(first).Seconds(); wall > 0 {
		t.throughput = float64(timedOK) / wall
	}
	return t, nil
}

// tailResult is what the wall-clock run measured.
type tailResult struct {
	p99, p999, max float64 // ns
	attempted      int64
	accepted       int64
}

// runTail is the separate wall-clock run on another fresh instance: every
// timed push is bracketed by two clock readings into a per-producer buffer
// sized before the run, and the buffers are concatenated and sorted.
func runTail(im *impl, sz sizing) (tailResult, error) {
	inst, err := im.build(sz)
	if err != nil {
		return tailResult{}, fmt.Errorf("%s: %w", im.name, err)
	}
	pushers := make([]pushFunc, sz.producers)
	lat := make([][]int64, sz.producers)
	for i := range pushers {
		pushers[i] = inst.pusher()
		lat[i] = make([]int64, sz.per)
	}
	accepted := make([]int64, sz.producers)
	runProducers(sz.producers, func(id int) {
		push, buf, warm := pushers[id], lat[id], sz.warmup()
		var ok int64
		for i := range warm {
			if push(newEvent(eventID(id, i))) {
				ok++
			}
		}
		for i := range buf {
			ev := newEvent(eventID(id, warm+i))
			t := time.Now()
			if push(ev) {
				ok++
			}
			buf[i] = int64(time.Since(t)) // monotonic clock
		}
		accepted[id] = ok
	})
	if err := stopInstance(inst); err != nil {
		return tailResult{}, fmt.Errorf("%s: %w", im.name, err)
	}
	all := make([]int64, 0, sz.producers*sz.per)
	var tr tailResult
	for i := range lat {
		all = append(all, lat[i]...)
		tr.accepted += accepted[i]
	}
	tr.attempted = int64(sz.producers * sz.burst())
	tr.p99, tr.p999, tr.max = tail(all)
	return tr, nil
}

// tail sorts latencies in place and returns p99, p99.9 and the maximum by
// the original's rule, sorted[round(p*(n-1))] (report.Percentile).
func tail(latencies []int64) (p99, p999, maxNs float64) {
	slices.Sort(latencies)
	return float64(report.Percentile(latencies, 0.99)),
		float64(report.Percentile(latencies, 0.999)),
		float64(report.Percentile(latencies, 1))
}

// stopInstance stops an instance under the shutdown timeout and then
// collects the garbage it leaves, so that the next instance's rings do not
// share the heap with the last one's and no collection is pending when the
// next timed phase starts.
func stopInstance(inst instance) error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := inst.stop(ctx)
	runtime.GC()
	return err
}

// measure runs the trials and the tail run of one row and returns the row:
// medians of the trials' cpu ns/op and throughput, drop % pooled over every
// push of every trial and of the tail run (so 0 means nothing was ever
// rejected), and the tail run's percentiles.
func measure(im *impl, sz sizing, trials int) (Row, error) {
	cpu := make([]float64, 0, trials)
	thr := make([]float64, 0, trials)
	var attempted, accepted int64
	for range trials {
		t, err := runTrial(im, sz)
		if err != nil {
			return Row{}, err
		}
		cpu = append(cpu, t.cpuNsPerOp)
		thr = append(thr, t.throughput)
		attempted += t.attempted
		accepted += t.accepted
	}
	tr, err := runTail(im, sz)
	if err != nil {
		return Row{}, err
	}
	attempted += tr.attempted
	accepted += tr.accepted
	return Row{
		Impl:           im.name,
		Producers:      sz.producers,
		CPUNsPerOp:     report.Median(cpu),
		DropPct:        dropPct(attempted, accepted),
		ThroughputPerS: report.Median(thr),
		P99Ns:          tr.p99,
		P999Ns:         tr.p999,
		MaxNs:          tr.max,
		items:          sz.per,
	}, nil
}

// dropPct is (attempted - accepted) / attempted, in percent.
func dropPct(attempted, accepted int64) float64 {
	if attempted == 0 {
		return 0
	}
	return 100 * float64(attempted-accepted) / float64(attempted)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// maxPerFor is the largest item count per producer (at least 10) for which
// shardedCapacity(producers, shards, per) stays within limit.
func maxPerFor(limit, producers, shards int) int {
	perShard := (producers + shards - 1) / shards
	burst := (limit - slack) / perShard // per + per/10 <= burst
	per := burst * 10 / 11
	for per > 10 && per+per/10 > burst {
		per--
	}
	for per+1+(per+1)/10 <= burst {
		per++
	}
	return max(per, 10)
}
