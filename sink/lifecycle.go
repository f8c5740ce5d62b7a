package sink

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shardedsink/shardedsink/internal/backoff"
)

// Flush waits until every value accepted before the call has been handed to
// Drain and that Drain call has returned. It returns nil then, ctx.Err() when
// ctx ends first (wrapped, with what it waited for, when a Drain call had
// not returned since the Flush began: below), and [ErrShutdown] when the
// workers stop (Shutdown) before that. Producers may keep pushing during a Flush; what they push after the
// call began may or may not be drained by the time Flush returns. Flush
// never waits for MaxDelay: while it runs, a worker holding a short batch
// hands it to Drain at once. Flush wakes sleeping workers (in IdlePoll mode
// too, where producers never do), does not cancel any Drain call, and is
// not a hot path: it waits by polling with a backoff from 20 µs to 1 ms. It
// panics with a nil ctx.
//
// Flush must not wait for the Drain call it is called from: that call holds
// its batch until it returns, so the flush could only end with its ctx.
// Called with the ctx that Drain received, or a ctx derived from it, Flush
// returns [ErrCalledFromDrain] at once. Called from inside Drain with an
// unrelated ctx (context.Background(), a ctx saved from elsewhere), it
// cannot tell a Drain call that waits for it from one that is merely slow:
// it waits until that ctx ends (for ever, with context.Background()), and
// then its error, which wraps ctx.Err(), names the shards whose Drain call
// had not returned since the Flush began and says that a Flush from inside
// that call waits for itself. Pass Drain's ctx on.
//
// With the spill tier, the values an earlier sink on the directory left
// (Stats().Recovered) reach a shard's Drain before the values the shard
// accepts: Flush waits for those ahead of a value it waits for, and not
// for the rest.
//
// Flush is exact with stealing and with producers that keep pushing; how
// it knows: docs/design.md, "sink: mechanism".
func (s *Sink[T]) Flush(ctx context.Context) error {
	s.mustBeMade()
	mustHaveCtx("Flush", ctx)
	if s.calledFromDrain(ctx) {
		return ErrCalledFromDrain
	}
	// No worker holds a batch for MaxDelay while this is raised. It is
	// raised before the loads of the sleeping flags in nudge, as a push
	// comes before its load of the flag: a worker about to hold a batch
	// either sees it, or is woken.
	s.flushing.Add(1)
	defer s.flushing.Add(-1)
	n := len(s.shards)
	began := make([]uint64, n) // each worker's batch number when the Flush began
	for i := range s.shards {
		began[i] = s.shards[i].seq.Load()
	}
	targets := make([]uint64, n) // each shard's accepted values (ledger.go)
	for i := range s.shards {
		targets[i] = s.readAccount(i).accepted()
	}
	err := s.waitUntil(ctx, func() bool {
		met := true
		for i := range s.shards {
			sh := &s.shards[i]
			if s.settledOf(i) < targets[i] {
				met = false
				s.nudge(sh)
			}
		}
		return met
	})
	if err != nil {
		return s.flushGaveUp(err, began)
	}
	// The batch parity (shard.seq): these loads see the odd value of the
	// round whose pops the loads of handed above observed, or a later one.
	seqs := targets // reuse
	for i := range s.shards {
		seqs[i] = s.shards[i].seq.Load()
	}
	err = s.waitUntil(ctx, func() bool {
		met := true
		for i := range s.shards {
			sh := &s.shards[i]
			if seq := sh.seq.Load(); seq%2 == 1 && seq == seqs[i] {
				met = false
				s.nudge(sh) // it may be holding its batch for MaxDelay
			}
		}
		return met
	})
	if err != nil {
		return s.flushGaveUp(err, began)
	}
	if s.spill != nil {
		// The files of the segments the values came from go before Flush
		// returns, so that the tier's figures (SpillBytes) are final.
		s.spill.reclaimAll(s)
	}
	return nil
}

// flushGaveUp is the error of a Flush whose wait ended with err. When ctx
// ended while a worker was still in the batch it held when the Flush began
// (its batch number odd and unchanged), the likeliest cause is a Flush
// called from inside that very Drain call with an unrelated ctx: the error
// says so, names the shards, and wraps err. Otherwise it is err itself.
func (s *Sink[T]) flushGaveUp(err error, began []uint64) error {
	if err == ErrShutdown {
		return err
	}
	var stuck []int
	for i := range s.shards {
		if seq := s.shards[i].seq.Load(); seq%2 == 1 && seq == began[i] {
			stuck = append(stuck, i)
		}
	}
	if len(stuck) == 0 {
		return err
	}
	which := fmt.Sprintf("the Drain call of shard %d", stuck[0])
	if len(stuck) > 1 {
		ids := make([]string, len(stuck))
		for i, id := range stuck {
			ids[i] = strconv.Itoa(id)
		}
		which = "the Drain calls of shards " + strings.Join(ids, ", ")
	}
	return fmt.Errorf("sink %q: Flush: %w while %s had not returned since the Flush began "+
		"(a Flush called from inside such a call waits for itself: pass it the ctx Drain received)", s.cfg.name, err, which)
}

// nudge wakes the worker of a shard that Flush, or a push parked for the
// worker (the hand-off), waits for. In IdleWake mode that is the doorbell,
// rung only when the worker sleeps. In IdlePoll mode producers never ring
// on their way in, and the worker may be asleep for a whole IdleSleep: the
// caller drops a token into the doorbell (without blocking; one may
// already be there), which the worker's sleep also waits on.
func (s *Sink[T]) nudge(sh *shard[T]) {
	if s.cfg.idle == IdleWake {
		if sh.isSleeping() {
			sh.wake()
		}
		return
	}
	select {
	case sh.doorbell <- struct{}{}:
	default:
	}
}

// waitUntil polls cond with a backoff until it holds, ctx ends, or the
// workers have all exited with cond still false.
func (s *Sink[T]) waitUntil(ctx context.Context, cond func() bool) error {
	return backoff.Poll(ctx, 20*time.Microsecond, time.Millisecond, s.done, ErrShutdown, cond)
}

// The sink's phases, in order. phase only moves forward, and only a
// Shutdown call holding shutdownSem moves it (advance); anyone loads it
// (reached).
//
//   - phaseOpen: pushes go into the rings.
//   - phaseClosing: the first Shutdown is closing the rings. It is set
//     before the first ring's Close, so a push that a closed ring refuses
//     sees it and counts itself as a drop after shutdown.
//   - phaseStopping: every ring is closed and finalCtx is set; stop is
//     closed with it, waking every worker, parked push and the monitor.
//     The store publishes finalCtx: workers read it after they see the
//     phase.
//   - phaseDrained: a Shutdown drained everything and returned nil.
//
// Resumable Shutdown, the one rule: a Shutdown whose ctx ends first
// leaves the phase at phaseStopping with values possibly left in the
// rings; the next Shutdown resumes the final drain (resume) instead of
// starting over, and only a Shutdown that drained everything moves on to
// phaseDrained, after which every Shutdown returns nil at once.
const (
	phaseOpen uint32 = iota
	phaseClosing
	phaseStopping
	phaseDrained
)

// reached reports whether the sink's phase is p or later.
func (s *Sink[T]) reached(p uint32) bool { return atomic.LoadUint32(&s.phase) >= p }

// advance moves the sink to phase p, the next one; the caller holds
// shutdownSem.
func (s *Sink[T]) advance(p uint32) {
	if cur := atomic.LoadUint32(&s.phase); p <= cur {
		panic(fmt.Sprintf("sink: phase %d after %d", p, cur))
	}
	atomic.StoreUint32(&s.phase, p)
	if p == phaseStopping {
		close(s.stop)
	}
}

// Shutdown stops the sink and drains it: it closes every ring (from then
// on every push returns false and is counted as dropped), lets each worker
// hand what its ring holds to Drain, and returns nil once every value
// accepted before the close has been handed to Drain and those calls have
// returned.
//
// When ctx ends first, it cancels the ctx of the Drain calls and returns
// an error that wraps ctx.Err() and says how many values are left; a later
// Shutdown resumes the drain from there (calls are serialised, and once
// one has returned nil every later call returns nil at once). Give it a
// ctx of its own, not one that has already ended (a signal's):
//
//	<-sigCtx.Done()
//	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
//	defer cancel()
//	err := s.Shutdown(ctx)
//
// Called with the ctx of one of this sink's Drain calls (or one derived
// from it) it returns [ErrCalledFromDrain] at once. It panics with a nil
// ctx. The protocol, and what "nothing lost to ctx" means exactly:
// docs/design.md, "sink: Shutdown".
func (s *Sink[T]) Shutdown(ctx context.Context) error {
	s.mustBeMade()
	mustHaveCtx("Shutdown", ctx)
	if s.calledFromDrain(ctx) {
		return ErrCalledFromDrain
	}
	if err := s.shutdownSem.Take(ctx); err != nil {
		return s.incomplete(err, false)
	}
	defer s.shutdownSem.Release()
	var err error
	switch {
	case s.reached(phaseDrained):
		return nil
	case s.reached(phaseClosing):
		err = s.resume(ctx)
	default:
		err = s.shutdown(ctx)
	}
	if s.spill != nil {
		err = s.settleSpill(err)
	}
	if err == nil {
		s.advance(phaseDrained)
	}
	return err
}

// settleSpill is the end of the first Shutdown call with a spill tier,
// whose drain ended with err: it closes the tier (spillTier.close), and
// what a drain cut short left goes to the next sink on the directory, not
// to a later Shutdown. A disk that fails to close is counted and logged,
// not returned: the drain's outcome is Shutdown's. The spiller exits as
// the sink stops.
func (s *Sink[T]) settleSpill(err error) error {
	<-s.spill.exited
	if cerr := s.spill.close(s, err); cerr != nil {
		s.spill.fault(s, -1, "closing the tier failed (a sink on the directory may hand Drain again what this one marked done since the last sync)", cerr)
	}
	return err
}

// shutdown is the first Shutdown: close the rings, stop the workers and the
// monitor, and wait for them.
func (s *Sink[T]) shutdown(ctx context.Context) error {
	// When ctx ends, cancel the ctx of every Drain call, in flight or to
	// come.
	stopCancel := context.AfterFunc(ctx, s.cancelDrain)
	defer stopCancel()
	if ctx.Err() != nil {
		// AfterFunc runs cancelDrain on a goroutine of its own, which may
		// come after a woken worker has begun its final drain: a ctx that
		// has already ended drains nothing, so cancel before the wake-up.
		s.cancelDrain()
	}
	if d, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		s.finalCtx, cancel = context.WithDeadline(s.drainCtx, d)
		defer cancel()
	}
	// Once every Close has returned, no push can succeed any more, and
	// every push that did is in a ring for the final drain to find. A
	// push that a closed ring refuses sees phaseClosing after the Close, so
	// it counts itself as one after shutdown.
	s.advance(phaseClosing)
	for _, c := range s.closers {
		c.Close()
	}
	s.lastDone = s.done
	s.advance(phaseStopping)

	defer s.cancelDrain() // AfterFunc may not have run yet
	return s.await(ctx, s.done, &s.faults.cutShort, s.finalCtx)
}

// resume is a later Shutdown after one whose ctx ended: wait for the Drain
// calls of the last one, then drain what is left with a worker per shard
// that holds values.
func (s *Sink[T]) resume(ctx context.Context) error {
	select {
	case <-s.lastDone:
	default:
		select {
		case <-s.lastDone:
		case <-ctx.Done():
			return s.incomplete(ctx.Err(), false)
		}
	}
	var todo []int
	for i := range s.shards {
		if s.shards[i].ring.Len() > 0 {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return s.incomplete(err, false)
	}
	// The ctx of the resumed Drain calls: marked as this sink's, with the
	// deadline of ctx, cancelled when ctx ends or this call returns.
	dctx, cancel := context.WithCancel(context.WithValue(context.Background(), drainMarker{}, s))
	defer cancel()
	stopCancel := context.AfterFunc(ctx, cancel)
	defer stopCancel()
	if d, ok := ctx.Deadline(); ok {
		var cancelDeadline context.CancelFunc
		dctx, cancelDeadline = context.WithDeadline(dctx, d)
		defer cancelDeadline()
	}
	a := &attempt{ctx: dctx, done: make(chan struct{})}
	a.running.Store(int32(len(todo)))
	s.lastDone = a.done
	for _, i := range todo {
		go newWorker(s, i, a).run()
	}
	return s.await(ctx, a.done, &a.cutShort, dctx)
}

// await waits until done is closed (the drainers of one Shutdown call have
// exited) or ctx ends, and tells whether anything was lost to the ctx: a
// Drain call that returned after its ctx ended (cut) may have given up on
// its batch, and a final drain cut short leaves values in the rings, which
// are closed, so any value still there is one the drain did not reach.
// drainCtx is the ctx of the final drain, which derives from ctx's deadline
// and ends when ctx does.
func (s *Sink[T]) await(ctx context.Context, done <-chan struct{}, cut *atomic.Bool, drainCtx context.Context) error {
	select {
	case <-done:
	case <-ctx.Done():
		// The drainers may have exited too: look once more, so that the
		// result does not depend on the case the select picked.
		select {
		case <-done:
		default:
			return s.incomplete(ctx.Err(), false)
		}
	}
	if !cut.Load() && s.queued() == 0 {
		return nil
	}
	err := ctx.Err()
	if err == nil {
		// Only the deadline can have ended the final drain while ctx.Err()
		// is still nil: ctx's own timer has not fired yet.
		err = drainCtx.Err()
	}
	if err == nil {
		err = context.DeadlineExceeded // not reached: see above
	}
	return s.incomplete(err, cut.Load())
}

// incomplete is the error of a Shutdown that its ctx cut short: it wraps
// err and says how many values the rings still hold.
func (s *Sink[T]) incomplete(err error, cut bool) error {
	n, where := s.queued(), "the rings"
	if s.spill != nil {
		where = "the rings and the spill tier"
	}
	if cut {
		return fmt.Errorf("sink: Shutdown ended with %d values left in %s and a Drain call cut short by its ctx: %w", n, where, err)
	}
	return fmt.Errorf("sink: Shutdown ended with %d values left in %s: %w", n, where, err)
}

// Done returns a channel that is closed once every drain worker and the
// overload monitor have exited, which only Shutdown makes them do. After a
// Shutdown whose ctx ended first, it tells when the last Drain call of that
// Shutdown has returned: from then on nothing touches the Action or the
// rings' consumer side until a later Shutdown resumes the drain, and
// Stats().Queued is what is left to drain.
func (s *Sink[T]) Done() <-chan struct{} { return s.done }
