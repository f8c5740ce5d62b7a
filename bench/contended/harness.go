package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"syscall"
	"time"
	"unsafe"

	"github.com/shardedsink/shardedsink/bench/internal/report"
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
	// empty runs between rounds, outside the timing, once accepted values
	// have been accepted in all since the instance was ready: held, the
	// harness pops every value left; draining, it waits until the
	// consumers have taken them all (some peers allow one consumer only).
	// The next round then starts with room for its whole budget.
	empty(ctx context.Context, accepted int64) error
	// stop runs once every producer has finished: it lets the consumers
	// take everything that is left, stops them, and leaves the row's memory
	// empty for the next trial.
	stop(ctx context.Context) error
}

// sizing is one row's shape: how many producers push, for how long, in
// rounds of how many pushes.
type sizing struct {
	producers int
	shards    int           // shards of the sharded rows
	window    time.Duration // measured time per trial
	round     int           // pushes per round: what every ring of the row holds, beyond the slack
	realtime  bool          // the producers' threads run under SCHED_RR where the process may (startCrew)
}

// slack is what every ring gets on top of a round: the values that prime a
// held sink's workers, and the chunk a producer may be in the middle of.
const slack = 1024 + chunk

// ringCapacity is the capacity of every ring and queue of a row whose
// rounds have round pushes: any one ring may take all of them (a sink's
// producers choose their rings, and the scheduler chooses who runs).
func ringCapacity(round int) int { return round + slack }

// shutdownTimeout bounds each instance's stop, and the wait for draining
// consumers to catch up between rounds.
const shutdownTimeout = 10 * time.Second

// trialResult is what one trial's measured rounds measured.
type trialResult struct {
	threadCPUNs float64 // Σ Δthread CPU of the producers over the rounds
	cpuNsPerOp  float64 // threadCPUNs / accepted timed pushes
	procNsPerOp float64 // Δprocess CPU over the rounds / accepted timed pushes
	throughput  float64 // accepted timed pushes per second of the rounds' wall time
	attempted   int64   // timed pushes
	accepted    int64
	// the warm-up round's pushes, for drop %
	warmAttempted, warmAccepted int64
	rounds                      int
	parallelism                 float64 // Σ thread CPU / Σ round wall: producers pushing at once, on average
	overlap                     float64 // Σ round overlap / Σ round wall: the share of the rounds with procs producers inside
	scheduler                   string  // the producers' scheduling policy (schedulerOf)
	counters                    counters
}

// counters are the process-wide events of the measured rounds: what the
// notes of issue 9 asked to rule in or out as the cause of the spread.
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

// processSnapshot is what a round is measured by, besides the producers'
// own clocks.
type processSnapshot struct {
	cpu         time.Duration
	minflt, csw int64
	gcCycles    int64
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
	}
}

// maxEmptyRounds bounds the rounds in a row in which no producer pushed
// (each needs the scheduler to run none of them before the deadline).
const maxEmptyRounds = 100

// runTrial measures one trial on a fresh instance of the row.
func runTrial[T any](setup rowSetup[T], sz sizing, limit int64) (trialResult, error) {
	inst, err := setup.trial()
	if err != nil {
		return trialResult{}, err
	}
	return runOn(inst, sz, limit)
}

// runOn runs one trial against inst, stops it, and sums what its measured
// rounds measured. Every round's budget is limit. The accept-path trials
// and the shed rows differ only in the instance and the limit.
func runOn[T any](inst instance[T], sz sizing, limit int64) (trialResult, error) {
	pushers := make([]func(T) bool, sz.producers)
	for i := range pushers {
		pushers[i] = inst.pusher()
	}
	// Collect the garbage of the last trial now, so that no collection is
	// pending, or started by an allocation, while the producers push.
	runtime.GC()
	c, rtErr := startCrew(pushers, sz.realtime)
	t, err := playRounds(c, inst, sz, limit)
	t.scheduler = schedulerOf(sz.realtime, rtErr)
	c.finish()
	if serr := stopInstance(inst); err == nil {
		err = serr
	}
	if err != nil {
		return trialResult{}, err
	}
	return t, nil
}

// playRounds plays a warm-up round, then measured rounds until their wall
// time adds up to the window, emptying the instance after each.
func playRounds[T any](c *crew[T], inst instance[T], sz sizing, limit int64) (trialResult, error) {
	var t trialResult
	var accepted int64 // every accepted push so far, warm-up included
	c.play(max(limit/10, 1), sz.window/10, false, nil)
	warm := c.result()
	accepted += warm.accepted
	t.warmAttempted, t.warmAccepted = warm.attempted, warm.accepted
	if err := emptyInstance(inst, accepted); err != nil {
		return t, err
	}
	consumed0 := inst.consumed()
	var cpu, wall, proc, overlap time.Duration
	empty := 0
	for wall < sz.window {
		before := snapshot()
		c.play(limit, sz.window-wall, true, nil)
		after := snapshot()
		rr := c.result()
		if rr.err != nil {
			return t, rr.err
		}
		if rr.attempted == 0 {
			if empty++; empty > maxEmptyRounds {
				return t, fmt.Errorf("%d rounds in a row in which no producer pushed", empty)
			}
			continue
		}
		empty = 0
		t.rounds++
		cpu += rr.cpu
		wall += rr.wall
		overlap += rr.overlap
		proc += after.cpu - before.cpu
		t.attempted += rr.attempted
		t.accepted += rr.accepted
		t.counters.add(counters{
			GCCycles:    after.gcCycles - before.gcCycles,
			MinorFaults: after.minflt - before.minflt,
			CtxSwitches: after.csw - before.csw,
		})
		accepted += rr.accepted
		if rr.wall == 0 {
			wall += time.Nanosecond // a round too short for the clock still counts
		}
		t.counters.Consumed = inst.consumed() - consumed0
		if err := emptyInstance(inst, accepted); err != nil {
			return t, err
		}
	}
	t.threadCPUNs = float64(cpu.Nanoseconds())
	if t.accepted > 0 {
		t.cpuNsPerOp = t.threadCPUNs / float64(t.accepted)
		t.procNsPerOp = float64(proc.Nanoseconds()) / float64(t.accepted)
	}
	t.throughput = float64(t.accepted) / wall.Seconds()
	t.parallelism = cpu.Seconds() / wall.Seconds()
	t.overlap = overlap.Seconds() / wall.Seconds()
	return t, nil
}

// emptyInstance empties inst between rounds under the shutdown timeout.
func emptyInstance[T any](inst instance[T], accepted int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	return inst.empty(ctx, accepted)
}

// tailResult is what the wall-clock run measured.
type tailResult struct {
	p99, p999, max float64 // ns
	attempted      int64
	accepted       int64
}

// runTail is the separate wall-clock run on a fresh instance: after a
// warm-up round, one round of at most limit pushes within the window, each
// push bracketed by two clock readings written to a buffer indexed by the
// push's claimed position.
func runTail[T any](setup rowSetup[T], sz sizing, limit int64) (tailResult, error) {
	inst, err := setup.trial()
	if err != nil {
		return tailResult{}, err
	}
	pushers := make([]func(T) bool, sz.producers)
	for i := range pushers {
		pushers[i] = inst.pusher()
	}
	lat := make([]int64, limit)
	runtime.GC()
	c, _ := startCrew(pushers, sz.realtime)
	tr, err := func() (tailResult, error) {
		var tr tailResult
		c.play(max(limit/10, 1), sz.window/10, false, nil)
		warm := c.result()
		if err := emptyInstance(inst, warm.accepted); err != nil {
			return tr, err
		}
		r := c.play(limit, sz.window, true, lat)
		rr := c.result()
		if rr.err != nil {
			return tr, rr.err
		}
		tr.attempted, tr.accepted = rr.attempted, rr.accepted
		n := min(r.claimed.Load(), limit) // every claimed position below the limit was pushed and timed
		tr.p99, tr.p999, tr.max = tail(lat[:n])
		return tr, nil
	}()
	c.finish()
	if serr := stopInstance(inst); err == nil {
		err = serr
	}
	return tr, err
}

// tail sorts latencies in place and returns p99, p99.9 and the maximum by
// the original's rule, sorted[round(p*(n-1))] (report.Percentile).
func tail(latencies []int64) (p99, p999, maxNs float64) {
	if len(latencies) == 0 {
		return 0, 0, 0
	}
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
// push, the medians of process CPU, throughput and parallelism, drop %
// pooled over every push of every round of every trial and of the tail run
// (so 0 means nothing was ever rejected), the tail run's percentiles, the
// trials' counters summed, and whether the row is valid (validFloor).
func measure[T any](im *impl[T], sz sizing, mode consumerMode, trials int) (Row, error) {
	setup, err := im.setup(sz, mode)
	if err != nil {
		return Row{}, fmt.Errorf("%s: %w", im.name, err)
	}
	row := Row{Impl: im.name, Producers: sz.producers, Consumers: mode.String(), PayloadBytes: payloadBytes[T](), Round: sz.round}
	limit := int64(sz.round)
	var attempted, accepted int64
	var c counters
	var rounds, overlaps []float64
	for range trials {
		t, err := runTrial(setup, sz, limit)
		if err != nil {
			return Row{}, fmt.Errorf("%s: %w", im.name, err)
		}
		row.CPUNsTrials = append(row.CPUNsTrials, t.cpuNsPerOp)
		row.ProcCPUNsTrials = append(row.ProcCPUNsTrials, t.procNsPerOp)
		row.ThroughputTrials = append(row.ThroughputTrials, t.throughput)
		row.ParallelismTrials = append(row.ParallelismTrials, t.parallelism)
		overlaps = append(overlaps, t.overlap)
		row.PushesTrials = append(row.PushesTrials, t.accepted)
		rounds = append(rounds, float64(t.rounds))
		row.Scheduler = t.scheduler
		attempted += t.attempted + t.warmAttempted
		accepted += t.accepted + t.warmAccepted
		c.add(t.counters)
	}
	tr, err := runTail(setup, sz, limit)
	if err != nil {
		return Row{}, fmt.Errorf("%s: tail run: %w", im.name, err)
	}
	row.CPUNsPerOp = report.Median(row.CPUNsTrials)
	row.CPUNsMin = slices.Min(row.CPUNsTrials)
	row.CPUNsMax = slices.Max(row.CPUNsTrials)
	row.ProcCPUNsPerOp = report.Median(row.ProcCPUNsTrials)
	row.ThroughputPerS = report.Median(row.ThroughputTrials)
	row.Parallelism = report.Median(row.ParallelismTrials)
	row.Rounds = report.Median(rounds)
	row.Overlap = report.Median(overlaps)
	row.P99Ns, row.P999Ns, row.MaxNs = tr.p99, tr.p999, tr.max
	row.DropPct = dropPct(attempted+tr.attempted, accepted+tr.accepted)
	row.Counters = c
	if accepted > 0 {
		row.ConsumedPct = 100 * float64(c.Consumed) / float64(accepted)
	}
	row.ParallelismFloor = validFloor(sz.producers, runtime.GOMAXPROCS(0))
	row.Valid = row.Parallelism >= row.ParallelismFloor
	setCoreNs(&row, runtime.GOMAXPROCS(0))
	return row, nil
}

// schedulerOf names the producers' scheduling policy: "SCHED_RR" where
// startCrew could set it, else "default", with the reason when it tried.
func schedulerOf(tried bool, err error) string {
	switch {
	case !tried:
		return "default"
	case err != nil:
		return "default (" + err.Error() + ")"
	}
	return "SCHED_RR"
}

// validFloor is the parallelism a row at producers producers must reach to
// be valid: 0.9 x min(producers, GOMAXPROCS) from 2 producers on (below
// it the producers did not push at the same instant for most of the
// window, and the row's queue was not contended as the table claims), none
// at 1 producer.
func validFloor(producers, gomaxprocs int) float64 {
	if producers < 2 {
		return 0
	}
	return 0.9 * float64(min(producers, gomaxprocs))
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
