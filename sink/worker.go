package sink

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/internal/limit"
)

// worker drains one home shard and steals from the others. Its fields are
// private to its goroutine.
type worker[T any] struct {
	s     *Sink[T]
	home  int
	sh    *shard[T]
	batch []T // len 0 between rounds, cap BatchSize; cleared after each Drain

	// With SizeOf set, meta[i] is batch[i]'s size and the shard it came
	// from (nil otherwise), and batchBytes their sum (held at
	// math.MaxInt64 where it would overflow; see addSizes). off is how much of
	// the batch has been handed to Drain already: MaxBatchBytes cuts a
	// round's values into several Drain calls (see drain).
	meta       []valueMeta
	batchBytes int64
	off        int

	// victim is the steal cursor: the next shard to visit, advanced on every
	// visit so that victims are taken in a deterministic round-robin that
	// starts after home. hinted is set when stealBehind pointed it at a
	// shard whose values wait behind a Drain call, until a round takes
	// values or the worker parks.
	victim int
	hinted bool

	// leaving is set while this goroutine may be ending by runtime.Goexit
	// (see run and drain).
	leaving bool

	// att is nil for the shard's worker, which drains until Shutdown and
	// then makes the final drain; it is the Shutdown call for a worker that
	// a later Shutdown started to resume a final drain that an ended ctx
	// cut short (see Sink.resume).
	att *attempt

	// d is the home shard's drain record (see drainstate.go); lastEnd is
	// when this worker's last Drain call returned (Sink.now).
	d       *drainState
	lastEnd int64

	// calls times this worker's calls into the destination, for an Action
	// that asks (sinkhook.CallsOf); callsCtx is the ctx of its Drain calls,
	// callsParent's with calls in it, made once per parent (the running
	// ctx, then the final drain's).
	calls                 callTimer
	callsCtx, callsParent context.Context

	// lastYield is when the worker last gave up its processor (Sink.now):
	// a yield after a batch, or a wait of idle.go (blocked).
	lastYield int64

	// fromDisk is set while the batch holds values read from the home
	// shard's spill tier, which are marked done once drained.
	fromDisk bool

	// first is when the worker took the first value of the batch it holds
	// (MaxDelay > 0 only).
	first time.Time

	// Idle state, see idle.go.
	timer      *time.Timer // reused for every idle sleep
	idleRounds int         // empty rounds since the last batch (idleBackoff)
	backoff    time.Duration
}

func newWorker[T any](s *Sink[T], home int, att *attempt) *worker[T] {
	w := &worker[T]{
		s:      s,
		home:   home,
		sh:     &s.shards[home],
		batch:  make([]T, 0, s.cfg.batchSize),
		victim: home + 1,
		att:    att,
		d:      &s.drains[home],
	}
	w.calls = callTimer{d: w.d, timed: &s.timed, epoch: s.epoch}
	if s.cfg.sizeOf != nil {
		w.meta = make([]valueMeta, 0, s.cfg.batchSize)
	}
	w.timer = time.NewTimer(time.Hour)
	w.timer.Stop()
	return w
}

// run is the worker's goroutine: rounds of burst, steal and Drain until
// Shutdown, then the final drain of the home ring.
//
// A Drain call (or the logger reporting a failed one) that calls
// runtime.Goexit ends this goroutine whatever drain does: deferred calls
// run, and then the goroutine is gone. drain marks the worker as leaving
// before anything that could do so, and the deferred call below hands the
// worker on to a new goroutine, so the shard keeps its worker and the
// running count (which Shutdown waits on) stays right.
func (w *worker[T]) run() {
	defer func() {
		if w.leaving {
			w.replace()
			return
		}
		w.timer.Stop()
		if w.att != nil {
			w.att.exited()
		} else {
			w.s.exited()
		}
	}()
	if w.att == nil {
		w.loop()
	}
	w.finalDrain()
}

// loop is the worker's life until Shutdown: rounds of burst, steal and
// Drain. With MaxDelay a round that leaves the batch short keeps it, and
// the next rounds top it up, until it is full or MaxDelay has passed since
// its first value was taken.
func (w *worker[T]) loop() {
	for !w.s.reached(phaseStopping) {
		held := len(w.batch)
		if held == 0 {
			// A batch held for MaxDelay stays in its round.
			w.beginRound()
		}
		own := w.burst()
		took := own
		if w.s.cfg.stealVictims > 0 && len(w.batch) < cap(w.batch) {
			took += w.steal()
		}
		if took > 0 {
			w.hinted = false
		}
		if len(w.batch) == 0 {
			w.endRound()
			w.idleWait()
			continue
		}
		if own > 0 {
			w.d.took(w.s.now())
		}
		if w.s.cfg.maxQueuedBytes == 0 {
			// The pops freed ring slots: wake the PushWait callers they
			// make room for (one atomic load when nobody waits). With a
			// byte budget, room comes with the give-back after Drain.
			w.s.wakeWaitersIfAny()
		}
		w.idleRounds = 0
		if w.s.cfg.maxDelay > 0 {
			if held == 0 {
				w.first = time.Now()
			}
			if w.hold() {
				w.waitBatch()
				continue
			}
		}
		if own == cap(w.batch)-held && w.s.cfg.stealVictims > 0 {
			// The home ring filled the batch and may be backing up: wake
			// one sleeping worker, which will steal from it.
			w.s.wakeHelper(w.home)
		}
		drained := len(w.batch)
		w.drain(w.s.drainCtx)
		w.endRound()
		// Pushes parked on this worker wait for room that the Action may
		// free only in Drain (see shardHooks.HandOff), and a lag begins if the
		// worker leaves values behind.
		w.s.wakeHandOffs(w.home, drained)
		if w.sh.ring.Len() > 0 {
			w.d.leftBehind(w.lastEnd)
		}
		if w.s.cfg.maxQueuedBytes > 0 {
			// The batch's bytes came back (and its slots, at the pops):
			// wake the PushWait callers they make room for.
			w.s.wakeWaitersIfAny()
		}
		// Yield now and then between batches (yieldDue), so that a Drain
		// that never blocks cannot hold a P for the whole 10 ms preemption
		// slice: timers and other goroutines on this P run between batches.
		if (!w.s.cfg.exp.watermark || w.sh.ring.Len() <= w.s.cfg.ringCapacity/2) && w.yieldDue() {
			runtime.Gosched()
			w.blocked()
		}
	}
}

// hold reports whether the worker keeps its short batch for more values:
// it is short of BatchSize and of MaxBatchBytes, MaxDelay has not passed
// since its first value, and no Flush is waiting.
func (w *worker[T]) hold() bool {
	return len(w.batch) < cap(w.batch) &&
		(w.s.cfg.maxBatchBytes == 0 || w.batchBytes < w.s.cfg.maxBatchBytes) &&
		w.s.flushing.Load() == 0 &&
		time.Since(w.first) < w.s.cfg.maxDelay
}

// finalDrain empties the home ring after Shutdown: bursts and Drains until a
// burst comes back empty, without stealing, or until the ctx of the final
// drain ends. A batch still held for MaxDelay goes to Drain first, whatever
// the ctx: its values are out of the ring, and Drain is the only place left
// for them. Shutdown set finalCtx before it set stopping, and this worker
// loaded stopping as true before it got here, so the read is ordered; a
// worker of a resumed Shutdown has the ctx of its attempt.
func (w *worker[T]) finalDrain() {
	ctx := w.s.finalCtx
	if w.att != nil {
		ctx = w.att.ctx
	}
	if len(w.batch) > 0 {
		w.drain(ctx)
		w.endRound()
	}
	for ctx.Err() == nil {
		w.beginRound()
		w.burst()
		if len(w.batch) == 0 {
			w.endRound()
			return
		}
		w.drain(ctx)
		w.endRound()
		runtime.Gosched()
	}
}

// burst appends values from the home ring to the batch until it is full or
// the ring is empty, and returns how many it took.
func (w *worker[T]) burst() int {
	w.sh.mu.Lock()
	fromDisk, ringNext := 0, true
	if t := w.s.spill; t != nil {
		// The tier holds the shard's oldest values: the ring's turn
		// comes once it is empty (see spilltier.go).
		var recovered int
		fromDisk, recovered, ringNext = t.replay(w, w.home, cap(w.batch)-len(w.batch))
		// Only this sink's values count in handed; what an earlier sink
		// left is counted as recovered (replay), apart (ledger.go).
		if own := fromDisk - recovered; own > 0 {
			w.sh.handed.Add(uint64(own))
		}
		w.s.checkLedger(w.home)
	}
	n := 0
	if ringNext {
		n = w.take(w.sh, w.home, cap(w.batch)-len(w.batch))
	}
	w.sh.mu.Unlock()
	w.measure(fromDisk+n, w.home, fromDisk)
	return fromDisk + n
}

// spillDone marks the values the drained batch had from the home shard's
// spill tier as done (see spillTier.done).
func (w *worker[T]) spillDone() {
	if !w.fromDisk {
		return
	}
	w.fromDisk = false
	w.sh.mu.Lock()
	w.s.spill.done(w.s, w.home)
	w.sh.mu.Unlock()
}

// steal tops the batch up from other shards: it visits them in round-robin
// order from the persistent cursor, skipping home, and takes at most
// stealItems from each of at most stealVictims victims, stopping when the
// batch is full or every other shard has been visited once. A victim whose
// consumer mutex is held (its home worker is in a burst, another worker is
// stealing from it, or Flush is reading it) is skipped: stealing never waits.
// It returns how many values it took.
func (w *worker[T]) steal() int {
	n := len(w.s.shards)
	taken := 0
	for tried, visits := 0, 0; tried < w.s.cfg.stealVictims && visits < n && len(w.batch) < cap(w.batch); visits++ {
		v := w.victim % n
		w.victim = v + 1
		if v == w.home {
			continue
		}
		tried++
		sh := &w.s.shards[v]
		if !sh.mu.TryLock() {
			continue
		}
		if t := w.s.spill; t != nil && t.shards[v].hasDisk.Load() {
			// Its oldest values are on disk, for its own worker.
			sh.mu.Unlock()
			continue
		}
		k := w.take(sh, v, min(w.s.cfg.stealItems, cap(w.batch)-len(w.batch)))
		sh.mu.Unlock()
		w.measure(k, v, 0)
		taken += k
	}
	return taken
}

// yieldAfter is how long a worker runs before it yields the processor
// between batches (yieldDue): well under the runtime's 10 ms preemption
// slice.
const yieldAfter = 2 * time.Millisecond

// yieldDue reports whether the worker yields after this batch: once it
// has run for yieldAfter since it last gave up its processor (a yield,
// or a wait for values). A yield puts the worker on the global run queue,
// behind every goroutine that is runnable; one after every batch left a
// worker short of CPU as soon as the process's other goroutines kept the
// cores busy. With two goroutines spinning beside 64 loggers paced at
// 90 % of zerolog's own rate (cd zerologsink && go test -run '^$' -bench
// '^BenchmarkOffered$/logger=zerologsink$' -benchtime 1x, 2-core AMD
// EPYC, 3 runs each), the loggers made 550 to 565 k calls of about 880 k
// offered, the longest 0.28 to 0.50 s, with a yield after every batch and
// a few before parking (the worker ran 61 ms of the 2 s, and waited 1.55
// s to run: go test -trace); 825 to 868 k, the longest 0.10 to 0.28 s,
// without the yields after the batches; 864 to 897 k, the longest 61 to
// 83 ms, without those before parking (park); and 846 to 913 k, the
// longest 31 to 40 ms, with neither (zerolog's own: 5 to 53 ms). It still
// yields now and then, between Drain calls, so that the runtime does not
// preempt it inside one after 10 ms of running, which a parked push would
// read as a slow destination (SlowDrain).
func (w *worker[T]) yieldDue() bool {
	return w.lastEnd-w.lastYield >= int64(yieldAfter)
}

// beginRound and endRound are the two steps of the batch parity (see
// shard.seq, which states the rule Flush relies on): beginRound before
// the first pop of a round, endRound once its batch has been drained and
// cleared, or found empty. Only the shard's worker calls them.
func (w *worker[T]) beginRound() {
	if n := w.sh.seq.Add(1); parityChecked && n%2 != 1 {
		panic(fmt.Sprintf("sink: shard %d began a round with batch number %d", w.home, n))
	}
}

func (w *worker[T]) endRound() {
	if n := w.sh.seq.Add(1); parityChecked && n%2 != 0 {
		panic(fmt.Sprintf("sink: shard %d ended a round with batch number %d", w.home, n))
	}
}

// parityChecked makes beginRound and endRound check the parity they
// turn; the package's tests set it (parity_test.go).
var parityChecked bool

// take pops up to limit values from sh, shard i, into the batch, and
// wakes the pushes parked on that shard when it took any. sh.mu must be
// held.
func (w *worker[T]) take(sh *shard[T], i, limit int) int {
	n := 0
	for n < limit {
		v, ok := sh.ring.TryPop()
		if !ok {
			break
		}
		w.batch = append(w.batch, v)
		n++
	}
	if n > 0 {
		// Under mu, after the pops: Flush, which reads the ledger under
		// mu, never sees a pop without its count.
		sh.handed.Add(uint64(n))
		w.s.checkLedger(i)
		w.s.wakeHandOffs(i, n)
	}
	return n
}

// replace hands the worker on to a new goroutine after its Drain call, or
// the logger reporting a failed one, called runtime.Goexit. It runs in the
// ending goroutine's last deferred call, after drain's, so nothing else
// touches the worker any more. The Goexit came from inside drain, where seq
// is odd. When that Drain call had the round's last values the round is
// over, so seq is made even as the round's end would have made it; when
// MaxBatchBytes had cut the round and values are left (drainOne moved them
// to the front of the batch), the round goes on in the new goroutine, seq
// stays odd, and it hands them to Drain.
func (w *worker[T]) replace() {
	if len(w.batch) == 0 {
		w.endRound()
	}
	w.leaving = false
	// The ended Drain call's bytes came back in its deferred give-back,
	// but the round's wake-up of PushWait callers (after drain) did not
	// run.
	w.s.wakeWaitersIfAny()
	go w.run()
}

// drain hands the batch to the Action: in one Drain call, or, with
// MaxBatchBytes, in as many calls of consecutive values as the bound needs
// (each at most MaxBatchBytes, or one larger value alone). It leaves the
// batch empty.
func (w *worker[T]) drain(ctx context.Context) {
	if ctx != w.callsParent {
		w.callsCtx, w.callsParent = context.WithValue(ctx, callTimerKey{}, &w.calls), ctx
	}
	ctx = w.callsCtx
	for w.off < len(w.batch) {
		w.drainOne(ctx, w.cut())
	}
	w.batch, w.off = w.batch[:0], 0
	if w.meta != nil {
		w.meta, w.batchBytes = w.meta[:0], 0
	}
	w.spillDone()
}

// cut returns the end of the next Drain call's values, from off: the
// whole rest of the batch, or with MaxBatchBytes the longest run whose
// sizes sum to at most it, and at least one value.
func (w *worker[T]) cut() int {
	limit := w.s.cfg.maxBatchBytes
	if limit == 0 {
		return len(w.batch)
	}
	sum := w.meta[w.off].size
	end := w.off + 1
	// limit-sum, not sum+size: sum <= limit after the first value or the
	// loop stops, so the difference cannot overflow where the sum could
	// (MaxBatchBytes up to math.MaxInt, sizes up to 2^48).
	for end < len(w.batch) && w.meta[end].size <= limit-sum {
		sum += w.meta[end].size
		end++
	}
	return end
}

// drainOne hands batch[off:end] to the Action, recovers a panic, clears
// those values so that the garbage collector can free what they held, and
// gives their bytes back (see handed). Drain gets a slice whose capacity
// equals its length, so an append in Drain cannot write into the worker's
// buffer.
//
// A Drain call that panics or calls runtime.Goexit loses its values: it is
// counted in the shard's panics and reported through the logger at Error
// (the first report in a minute carries the stack of the panic). After a
// Goexit, run hands the worker on to a new goroutine, which hands the values
// left in the batch, if any, to Drain.
func (w *worker[T]) drainOne(ctx context.Context, end int) {
	from := w.off
	n := end - from
	returned := false
	start := w.s.now()
	w.d.drainBegan(start)
	if w.s.watchTimer != nil && w.att == nil {
		w.s.watchDrain() // after the store of start: see stealwatch.go
	}
	if t := w.s.spill; t != nil && w.s.cfg.handOffWait == 0 {
		t.wake() // after the store of start: see spillTier.sleeping
	}
	defer func() {
		r := recover() // nil after a return, and during a Goexit
		w.lastEnd = w.s.now()
		w.d.drainEnded(start, w.lastEnd, atomic.LoadInt32(&w.s.timed) != 0)
		goexit := !returned && r == nil
		if ctx.Err() != nil {
			if w.att != nil {
				w.att.cutShort.Store(true)
			} else {
				w.s.faults.cutShort.Store(true)
			}
		}
		w.handed(from, end)
		if returned {
			return
		}
		// The values left move to the front of the batch, where the
		// goroutine that takes over after a Goexit (this one's or the
		// logger's) finds them.
		w.compact()
		w.sh.panics.Add(1)
		// Until the report returns, the goroutine may be ending: a logger
		// can call runtime.Goexit too.
		w.leaving = true
		if goexit {
			w.s.log(slog.LevelError, "sink: Drain called runtime.Goexit; the batch is lost, and the shard's worker goes on in a new goroutine",
				"sink", w.s.cfg.name, "shard", w.home, "batch", n)
			return // leaving stays set: the goroutine ends after this call
		}
		args := []any{"sink", w.s.cfg.name, "shard", w.home, "batch", n, "panic", fmt.Sprint(r)}
		if w.s.faults.stackTurn() {
			args = append(args, "stack", string(debug.Stack()))
		}
		w.s.log(slog.LevelError, "sink: Drain panicked; the batch is lost", args...)
		w.leaving = false
	}()
	w.s.action.Drain(ctx, w.batch[from:end:end])
	returned = true
}

// valueMeta is what a worker keeps about a value it took, with SizeOf set.
type valueMeta struct {
	size int64
	from int32 // the shard whose ring it came from, whose bytes it holds
	// disk is set for a value read back from the spill tier: it holds no
	// bytes of the budget (the spiller gave them back).
	disk bool
}

// measure records the sizes of the last n values taken into the batch,
// from shard from, the first fromDisk of them from its spill tier, when
// SizeOf is set. It runs after the shard's consumer mutex is released:
// SizeOf is the user's code.
func (w *worker[T]) measure(n, from, fromDisk int) {
	if w.meta == nil {
		return
	}
	for k, v := range w.batch[len(w.batch)-n:] {
		m := valueMeta{size: sizeOf(w.s.cfg.sizeOf, v), from: int32(from), disk: k < fromDisk}
		w.meta = append(w.meta, m)
		w.batchBytes = addSizes(w.batchBytes, m.size)
	}
}

// addSizes returns sum+n (both non-negative), or math.MaxInt64 where that
// would overflow: a batch of up to MaxRingCapacity values of up to 2^48
// bytes each can sum past it, and batchBytes only needs to tell whether the
// batch has reached MaxBatchBytes, which is at most math.MaxInt64.
func addSizes(sum, n int64) int64 {
	if n > math.MaxInt64-sum {
		return math.MaxInt64
	}
	return sum + n
}

// handed is the end of a Drain call with batch[from:to], however it ended:
// it clears the values, then gives their bytes back to the shards they
// came from (one atomic add per run of values from one shard), so that
// the bytes are counted as long as the sink holds the values, and moves
// off past them.
func (w *worker[T]) handed(from, to int) {
	clear(w.batch[from:to])
	w.off = to
	if w.meta == nil {
		return
	}
	budgeted := w.s.cfg.maxQueuedBytes > 0
	if !budgeted {
		return
	}
	// Each run's sum is at most what its shard held at once, which the
	// budget keeps within max(share, 2^48): no overflow.
	var run int32
	var sum int64
	for i, m := range w.meta[from:to] {
		if i > 0 && m.from != run {
			w.s.shards[run].slow.budget.release(sum)
			sum = 0
		}
		run = m.from
		if !m.disk {
			sum += m.size
		}
	}
	if budgeted && to > from {
		w.s.shards[run].slow.budget.release(sum)
	}
}

// compact moves the values not yet handed to Drain, batch[off:], to the
// front of the batch.
func (w *worker[T]) compact() {
	if w.off == 0 {
		return
	}
	n := copy(w.batch, w.batch[w.off:])
	clear(w.batch[n:])
	w.batch = w.batch[:n]
	if w.meta != nil {
		w.meta = w.meta[:copy(w.meta, w.meta[w.off:])]
		w.batchBytes = 0
		for _, m := range w.meta {
			w.batchBytes = addSizes(w.batchBytes, m.size)
		}
	}
	w.off = 0
}

// stackEvery is the least time between two reports of a Drain panic that
// carry the panic's stack: a Drain that panics on every batch would fill
// the log with stacks.
const stackEvery = time.Minute

// faults is what the workers and the monitor record about failed calls.
// None of it is on a producer's path.
type faults struct {
	// cutShort is set by a worker whose Drain call returned after its ctx
	// had ended: that call may have given up on its batch. Shutdown reads
	// it after the workers have exited (done is closed after every set).
	cutShort atomic.Bool
	// stacks is the turn of the Drain panic reports that carry a stack
	// (Unix nanoseconds).
	stacks limit.Every
}

// stackTurn reports whether the caller's panic report may carry a stack:
// true for the first report, and then for the first after each stackEvery.
// Of two workers that ask at once, one gets the turn.
func (f *faults) stackTurn() bool { return f.stacks.Turn(time.Now().UnixNano(), stackEvery) }

// log writes one record through the logger. A logger that panics loses the
// record, not the goroutine that reports: the panic is recovered, and one
// line on standard error says what was lost.
func (s *Sink[T]) log(level slog.Level, msg string, args ...any) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "sink %q: the Logger panicked (%v) and lost a record: %s\n", s.cfg.name, r, msg)
		}
	}()
	s.logger().Log(context.Background(), level, msg, args...)
}

// attempt is a Shutdown call that resumes a final drain which the ctx of an
// earlier one cut short: it starts a worker for each shard that still holds
// values and waits for them.
type attempt struct {
	ctx      context.Context // the ctx of its Drain calls
	running  atomic.Int32    // its workers still running
	done     chan struct{}   // closed by the last of them to exit
	cutShort atomic.Bool     // as faults.cutShort, for its Drain calls
}

// exited is called by each worker of the attempt as it exits.
func (a *attempt) exited() {
	if a.running.Add(-1) == 0 {
		close(a.done)
	}
}

// exited is called by each worker and the monitor as it exits; the last one
// closes done.
func (s *Sink[T]) exited() {
	if s.running.Add(-1) == 0 {
		close(s.done)
	}
}
