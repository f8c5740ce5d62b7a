package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/shardedsink/shardedsink/bench/internal/report"
	"github.com/shardedsink/shardedsink/internal/cputime"
)

// Event is the 32-byte payload (-payload 32): a plain record without
// pointers, the shape of the original harness's TelemetryEvent (a 16-byte
// request id, a timestamp, a route, a status and flags). The 8-byte payload
// (-payload 8, the headline: the original pushes small values) is a uint64.
type Event struct {
	RequestID [2]uint64
	Timestamp uint64
	Route     uint32
	Status    uint16
	Flags     uint16
}

// value returns the payload of push id: its first eight bytes hold id and
// the rest is zero, so every push carries a distinct value and copies the
// whole payload. The push goes through a function value into another
// package and its result is counted, which keeps the compiler from dropping
// it (Go has no black_box, and needs none here).
func value[T any](id uint64) T {
	var v T
	*(*uint64)(unsafe.Pointer(&v)) = id
	return v
}

// idOf reads back the id that value stored.
func idOf[T any](v *T) uint64 { return *(*uint64)(unsafe.Pointer(v)) }

// eventID is the original's id rule: the producer in the high bits, the
// push's index (warm-up pushes first) in the low 40.
func eventID(producer, i int) uint64 { return uint64(producer)<<40 | uint64(i) }

// consumerMode is what the consumers do while the producers push (the
// -consumers flag).
type consumerMode int

const (
	// held: nobody pops during the trial. Sink workers are blocked in a
	// Drain call on a gate (entered before the producers start); single
	// queues have no consumer until the producers are done. The table then
	// measures the push path alone.
	held consumerMode = iota
	// draining: every structure's consumers pop while the producers push,
	// under one policy: take up to 256 values, yield, and sleep 100 µs when
	// the queue is empty (a sink worker in IdlePoll mode does exactly this;
	// sharded-default keeps the sink's default, IdleWake).
	draining
)

func (m consumerMode) String() string {
	if m == held {
		return "held"
	}
	return "draining"
}

func parseConsumerMode(s string) (consumerMode, error) {
	switch s {
	case "held":
		return held, nil
	case "draining":
		return draining, nil
	}
	return 0, fmt.Errorf("-consumers: unknown mode %q (want held or draining)", s)
}

// rowSetup is one row's memory (the rings of a sink, or a shared queue),
// allocated and pre-touched once and reused by every trial of the row, so
// that no trial allocates, faults in or frees hundreds of megabytes.
type rowSetup[T any] interface {
	// trial returns a fresh instance on the row's memory: a new sink with
	// its workers, or the queue with a new consumer (none when held). When
	// held, a sink's workers are already blocked in Drain.
	trial() (instance[T], error)
}

// instance is one trial's implementation under test.
type instance[T any] interface {
	// pusher returns the push function for the next producer. The harness
	// calls it once per producer before the producers start; a sink row
	// takes a Handle here, so handles spread round-robin.
	pusher() func(T) bool
	// consumed is how many values the consumers have taken since the
	// instance was ready (0 while held).
	consumed() int64
	// stop runs once every producer has finished: it lets the consumers
	// take everything that is left, stops them, and leaves the row's memory
	// empty for the next trial.
	stop(ctx context.Context) error
}

// sizing is one row's shape: how many producers push how many values.
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

// shutdownTimeout bounds each instance's stop.
const shutdownTimeout = 10 * time.Second

// trialResult is what one trial measured.
type trialResult struct {
	threadCPUNs float64 // Σ Δthread CPU over the producers' timed loops
	cpuNsPerOp  float64 // threadCPUNs / Σ accepted timed pushes
	procNsPerOp float64 // Δprocess CPU over the producer phase / accepted pushes in it
	throughput  float64 // accepted timed pushes per second of the timed phase
	attempted   int64   // warm-up and timed pushes
	accepted    int64
	timedOK     int64
	parallelism float64 // Σ timed thread CPU / wall of the timed phase: producers running at once, on average
	counters    counters
}

// counters are the process-wide events of a producer phase: what the notes
// of issue 9 asked to rule in or out as the cause of the spread.
type counters struct {
	GCCycles    int64 `json:"gc_cycles"`    // garbage collections completed
	MinorFaults int64 `json:"minor_faults"` // page faults (getrusage ru_minflt)
	CtxSwitches int64 `json:"ctx_switches"` // voluntary + involuntary context switches of all threads
	Consumed    int64 `json:"consumed"`     // values the consumers took
}

func (c *counters) add(o counters) {
	c.GCCycles += o.GCCycles
	c.MinorFaults += o.MinorFaults
	c.CtxSwitches += o.CtxSwitches
	c.Consumed += o.Consumed
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

// processSnapshot is what the producer phase is measured by, besides the
// producers' own clocks.
type processSnapshot struct {
	cpu              time.Duration
	minflt, csw      int64
	gcCycles         int64
	wall             time.Time
	consumedAtFinish int64
}

var gcSample = []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}

func snapshot() processSnapshot {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	metrics.Read(gcSample)
	return processSnapshot{
		cpu:      time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		minflt:   ru.Minflt,
		csw:      ru.Nvcsw + ru.Nivcsw,
		gcCycles: int64(gcSample[0].Value.Uint64()),
		wall:     time.Now(),
	}
}

// runProducers starts n producers, each on its own locked OS thread, lets
// them all reach a barrier, releases them together, and waits for all of
// them. body runs on producer i's goroutine after the barrier. The process
// is measured from just before the release to just after the last producer
// returned.
func runProducers(n int, body func(i int)) (before, after processSnapshot) {
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
	before = snapshot()
	close(start)
	done.Wait()
	after = snapshot()
	return before, after
}

// produce is one producer's trial: per/10 warm-up pushes, then per timed
// pushes between two readings of the thread's CPU clock. The wall-clock
// readings that bound the timed phase sit outside the CPU window.
func produce[T any](id int, push func(T) bool, warm, per int) producerResult {
	var r producerResult
	for i := range warm {
		if push(value[T](eventID(id, i))) {
			r.accepted++
		}
	}
	r.start = time.Now()
	c0, err0 := cputime.Thread()
	var ok int64
	for i := range per {
		if push(value[T](eventID(id, warm+i))) {
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

// runTrial measures one trial on a fresh instance of the row.
func runTrial[T any](setup rowSetup[T], sz sizing) (trialResult, error) {
	inst, err := setup.trial()
	if err != nil {
		return trialResult{}, err
	}
	return runOn(inst, sz)
}

// runOn runs the producers of one trial against inst, stops it, and
// summarises what they measured. The accept-path trials and the shed rows
// differ only in the instance they hand it.
func runOn[T any](inst instance[T], sz sizing) (trialResult, error) {
	pushers := make([]func(T) bool, sz.producers)
	for i := range pushers {
		pushers[i] = inst.pusher()
	}
	results := make([]producerResult, sz.producers)
	// Collect the garbage of the last trial now, so that no collection is
	// pending, or started by an allocation, while the producers push.
	runtime.GC()
	before, after := runProducers(sz.producers, func(i int) {
		results[i] = produce(i, pushers[i], sz.warmup(), sz.per)
	})
	after.consumedAtFinish = inst.consumed()
	if err := stopInstance(inst); err != nil {
		return trialResult{}, err
	}
	return summarizeTrial(results, before, after)
}

// summarizeTrial folds the producers' results and the process counters into
// one trial's numbers.
func summarizeTrial(results []producerResult, before, after processSnapshot) (trialResult, error) {
	var t trialResult
	var cpu time.Duration
	first, last := results[0].start, results[0].end
	for _, r := range results {
		if r.err != nil {
			return trialResult{}, r.err
		}
		cpu += r.cpu
		t.attempted += r.attempted
		t.accepted += r.accepted
		t.timedOK += r.timedOK
		if r.start.Before(first) {
			first = r.start
		}
		if r.end.After(last) {
			last = r.end
		}
	}
	t.threadCPUNs = float64(cpu.Nanoseconds())
	if t.timedOK > 0 {
		t.cpuNsPerOp = float64(cpu.Nanoseconds()) / float64(t.timedOK)
	}
	if t.accepted > 0 {
		t.procNsPerOp = float64((after.cpu - before.cpu).Nanoseconds()) / float64(t.accepted)
	}
	if wall := last.Sub(first).Seconds(); wall > 0 {
		t.throughput = float64(t.timedOK) / wall
		t.parallelism = cpu.Seconds() / wall
	}
	t.counters = counters{
		GCCycles:    after.gcCycles - before.gcCycles,
		MinorFaults: after.minflt - before.minflt,
		CtxSwitches: after.csw - before.csw,
		Consumed:    after.consumedAtFinish,
	}
	return t, nil
}

// tailResult is what the wall-clock run measured.
type tailResult struct {
	p99, p999, max float64 // ns
	attempted      int64
	accepted       int64
}

// runTail is the separate wall-clock run on a fresh instance: every timed
// push is bracketed by two clock readings into a per-producer buffer sized
// before the run, and the buffers are concatenated and sorted.
func runTail[T any](setup rowSetup[T], sz sizing) (tailResult, error) {
	inst, err := setup.trial()
	if err != nil {
		return tailResult{}, err
	}
	pushers := make([]func(T) bool, sz.producers)
	lat := make([][]int64, sz.producers)
	for i := range pushers {
		pushers[i] = inst.pusher()
		lat[i] = make([]int64, sz.per)
	}
	accepted := make([]int64, sz.producers)
	runtime.GC()
	runProducers(sz.producers, func(id int) {
		push, buf, warm := pushers[id], lat[id], sz.warmup()
		var ok int64
		for i := range warm {
			if push(value[T](eventID(id, i))) {
				ok++
			}
		}
		for i := range buf {
			v := value[T](eventID(id, warm+i))
			t := time.Now()
			if push(v) {
				ok++
			}
			buf[i] = int64(time.Since(t)) // monotonic clock
		}
		accepted[id] = ok
	})
	if err := stopInstance(inst); err != nil {
		return tailResult{}, err
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

// stopInstance stops an instance under the shutdown timeout.
func stopInstance[T any](inst instance[T]) error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	return inst.stop(ctx)
}

// measure runs the trials and the tail run of one row and returns the row:
// the median, minimum and maximum of the trials' per-thread CPU per accepted
// push, the medians of process CPU and throughput, drop % pooled over every
// push of every trial and of the tail run (so 0 means nothing was ever
// rejected), the tail run's percentiles, and the trials' counters summed.
func measure[T any](im *impl[T], sz sizing, mode consumerMode, trials int) (Row, error) {
	setup, err := im.setup(sz, mode)
	if err != nil {
		return Row{}, fmt.Errorf("%s: %w", im.name, err)
	}
	row := Row{Impl: im.name, Producers: sz.producers, Consumers: mode.String(), PayloadBytes: payloadBytes[T](), Items: sz.per}
	var attempted, accepted int64
	var c counters
	var par []float64
	for range trials {
		t, err := runTrial(setup, sz)
		if err != nil {
			return Row{}, fmt.Errorf("%s: %w", im.name, err)
		}
		row.CPUNsTrials = append(row.CPUNsTrials, t.cpuNsPerOp)
		row.ProcCPUNsTrials = append(row.ProcCPUNsTrials, t.procNsPerOp)
		row.ThroughputTrials = append(row.ThroughputTrials, t.throughput)
		par = append(par, t.parallelism)
		attempted += t.attempted
		accepted += t.accepted
		c.add(t.counters)
	}
	tr, err := runTail(setup, sz)
	if err != nil {
		return Row{}, fmt.Errorf("%s: tail run: %w", im.name, err)
	}
	row.CPUNsPerOp = report.Median(row.CPUNsTrials)
	row.CPUNsMin = slices.Min(row.CPUNsTrials)
	row.CPUNsMax = slices.Max(row.CPUNsTrials)
	row.ProcCPUNsPerOp = report.Median(row.ProcCPUNsTrials)
	row.ThroughputPerS = report.Median(row.ThroughputTrials)
	row.Parallelism = report.Median(par)
	row.P99Ns, row.P999Ns, row.MaxNs = tr.p99, tr.p999, tr.max
	row.DropPct = dropPct(attempted+tr.attempted, accepted+tr.accepted)
	row.Counters = c
	if accepted > 0 {
		row.ConsumedPct = 100 * float64(c.Consumed) / float64(accepted)
	}
	return row, nil
}

// payloadBytes is the size of the payload type.
func payloadBytes[T any]() int {
	var v T
	return int(unsafe.Sizeof(v))
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
