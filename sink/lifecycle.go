package sink

import (
	"context"
	"time"
)

// Flush waits until every value accepted before the call has been handed to
// Drain and that Drain call has returned. It returns nil then, ctx.Err() when
// ctx ends first, and [ErrShutdown] when the workers stop (Shutdown) before
// that. Producers may keep pushing during a Flush; what they push after the
// call began may or may not be drained by the time Flush returns. Flush wakes
// sleeping workers (in IdlePoll mode too, where producers never do), does not cancel any Drain call, and is not a hot path: it
// waits by polling with a backoff from 20 µs to 1 ms.
//
// Flush must not wait for the Drain call it is called from: that call holds
// its batch until it returns, so the flush could only end with its ctx.
// Called with the ctx that Drain received, or a ctx derived from it, Flush
// returns [ErrCalledFromDrain] at once. Called from inside Drain with an
// unrelated ctx (context.Background(), a ctx saved from elsewhere), it
// cannot tell, and it waits until that ctx ends: pass Drain's ctx on.
//
// How it knows: every pop from shard i happens under the shard's consumer
// mutex and adds to its popped counter before the mutex is released, and
// rings are FIFO. So, reading popped_i + Len_i under the mutex gives a target
// t_i such that once popped_i >= t_i every value accepted into shard i before
// the read has been taken by some worker. A worker takes values only while
// its batch sequence number is odd, and it makes the number odd before it
// pops and even only after the batch is drained and cleared. So once the
// targets are met, a worker whose number is even, or has changed since,
// holds none of those values any more.
func (s *Sink[T]) Flush(ctx context.Context) error {
	if s.calledFromDrain(ctx) {
		return ErrCalledFromDrain
	}
	n := len(s.shards)
	targets := make([]uint64, n)
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		targets[i] = sh.popped.Load() + uint64(sh.ring.Len())
		sh.mu.Unlock()
	}
	err := s.waitUntil(ctx, func() bool {
		met := true
		for i := range s.shards {
			sh := &s.shards[i]
			if sh.popped.Load() < targets[i] {
				met = false
				s.nudge(sh)
			}
		}
		return met
	})
	if err != nil {
		return err
	}
	// The loads of popped above observed the pops, which each worker made
	// after its seq turned odd, so these loads see that odd value or a
	// later one.
	seqs := targets // reuse
	for i := range s.shards {
		seqs[i] = s.shards[i].seq.Load()
	}
	return s.waitUntil(ctx, func() bool {
		for i := range s.shards {
			if seq := s.shards[i].seq.Load(); seq%2 == 1 && seq == seqs[i] {
				return false
			}
		}
		return true
	})
}

// nudge wakes the worker of a shard that Flush waits for. In IdleWake mode
// that is the doorbell, rung only when the worker sleeps. In IdlePoll mode
// producers never ring, and the worker may be asleep for a whole IdleSleep:
// Flush drops a token into the doorbell (without blocking; one may already
// be there), which the worker's sleep also waits on.
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
	const first, most = 20 * time.Microsecond, time.Millisecond
	var t *time.Timer
	for d := first; ; d = min(2*d, most) {
		if cond() {
			return nil
		}
		select {
		case <-s.done:
			if cond() {
				return nil
			}
			return ErrShutdown
		default:
		}
		if t == nil {
			t = time.NewTimer(d)
			defer t.Stop()
		} else {
			t.Reset(d)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Shutdown stops the sink: the workers drain what is buffered in their own
// rings (no more stealing) and exit, and the overload monitor makes a last
// check of the drop counters and exits. It returns nil once they all have,
// or ctx.Err() when ctx ends first; then the ctx given to in-flight Drain
// calls is cancelled, the workers exit as soon as their current Drain
// returns, and what is still in the rings stays there (Stats().Queued shows
// it; [Sink.Done] is closed when the last of them has exited). The Drain
// calls of the final drain get a ctx with the deadline of Shutdown's ctx.
//
// Shutdown returns nil only when nothing was lost to its ctx: the workers
// have exited, and no Drain call returned after its ctx had ended, and, if
// the deadline of ctx has passed, nothing is left in the rings. Otherwise it
// returns ctx.Err(), or context.DeadlineExceeded when the deadline has
// passed but ctx has not reported it yet. With a ctx that has already ended
// when Shutdown is called, the result is nil only if the rings were empty,
// no Drain call was in flight, and the workers had exited by the time
// Shutdown looked; otherwise it is ctx.Err().
//
// Called with the ctx of one of this sink's Drain calls, or a ctx derived
// from it, Shutdown returns [ErrCalledFromDrain] at once and does nothing:
// it would wait for that Drain call to return. To stop the sink from inside
// Drain, call Shutdown on another goroutine, with another ctx.
//
// Shutdown is producer-quiesced: stop pushing first. Values pushed while
// Shutdown runs may be drained or may stay in the rings; a producer that
// keeps a ring from emptying keeps Shutdown waiting until ctx ends.
//
// Shutdown is idempotent: the first call does the work, and every call
// returns its result, even a ctx error. A call made while the first is still
// waiting returns when the first does, or with its own ctx.Err() when its
// ctx ends first.
//
// There is no closed state: a push after Shutdown is accepted into its ring
// until the ring is full, and nothing drains it.
func (s *Sink[T]) Shutdown(ctx context.Context) error {
	if s.calledFromDrain(ctx) {
		return ErrCalledFromDrain
	}
	first := false
	s.shutdownOnce.Do(func() { first = true })
	if first {
		s.shutdownErr = s.shutdown(ctx)
		close(s.shutdownDone)
		return s.shutdownErr
	}
	select {
	case <-s.shutdownDone:
		return s.shutdownErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Sink[T]) shutdown(ctx context.Context) error {
	// When ctx ends, cancel the ctx of every Drain call, in flight or to
	// come.
	stopCancel := context.AfterFunc(ctx, s.cancelDrain)
	defer stopCancel()
	if d, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		s.finalCtx, cancel = context.WithDeadline(s.drainCtx, d)
		defer cancel()
	}
	// Publishes finalCtx: the workers read it after they load stopping true.
	s.stopping.Store(true)
	close(s.stop) // wakes parked and sleeping workers and the monitor

	defer s.cancelDrain() // AfterFunc may not have run yet
	select {
	case <-s.done:
	case <-ctx.Done():
		// The workers may have exited too: look once more, so that the
		// result does not depend on the case the select picked.
		select {
		case <-s.done:
		default:
			return ctx.Err()
		}
	}
	// Every worker has exited. Was anything lost to ctx? A Drain call that
	// returned after its ctx ended may have given up on its batch, and a
	// final drain cut short by the deadline leaves values in the rings.
	// (Values left while finalCtx is live were pushed during Shutdown, and
	// those are not Shutdown's to drain.) finalCtx derives from drainCtx,
	// so its Err covers both the cancel that the AfterFunc above makes when
	// ctx ends and the deadline of ctx.
	if s.faults.cutShort.Load() || s.finalCtx.Err() != nil && s.queued() > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Only the deadline can have ended finalCtx while ctx.Err() is
		// still nil: ctx's own timer has not fired yet.
		return s.finalCtx.Err()
	}
	return nil
}

// Done returns a channel that is closed once every drain worker and the
// overload monitor have exited, which only Shutdown makes them do. After a
// Shutdown whose ctx ended first, it tells when the last Drain call has
// returned: from then on nothing touches the Action or the rings' consumer
// side, and Stats().Queued is what stays undrained.
func (s *Sink[T]) Done() <-chan struct{} { return s.done }
