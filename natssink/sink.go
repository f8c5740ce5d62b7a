package natssink

import (
	"context"
	"errors"
	"fmt"
	"github.com/shardedsink/shardedsink/internal/backoff"
	"github.com/shardedsink/shardedsink/internal/fielderr"
	"github.com/shardedsink/shardedsink/internal/layout"
	"github.com/shardedsink/shardedsink/internal/serial"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/shardedsink/shardedsink/sink"
)

// Sink publishes the values pushed into it to NATS JetStream, one message
// per value, from the drain workers of a [sink.Sink]. See the package
// documentation for the guarantees and the costs.
//
// A Sink is safe for concurrent use. It must not be copied.
type Sink[T any] struct {
	_ layout.NoCopy

	cfg       settings[T]
	sink      *sink.Sink[T]
	transport transport
	inbox     string // the subject prefix of the acks: inbox.seq.slot.attempt
	unsub     func() error
	// unsubOnce runs unsub once; unsubErr is its result.
	unsubOnce sync.Once
	unsubErr  error
	epoch     time.Time // the origin of the nanosecond times in the slots

	// slots holds the publishes in flight; pool holds the free ones and
	// bounds the values in flight in number and in bytes. A worker takes a
	// slot from pool before it publishes a value, so pool is the
	// MaxInFlight (and MaxInFlightBytes) semaphore.
	slots    slotTable
	pool     *pool
	seq      atomic.Uint64 // the last sequence number given to a value
	inflight atomic.Int64  // slots taken: the values published and not yet acked or failed

	// The counts, each updated with one atomic add off the producers'
	// path: by the drain workers, the ack handler and the retry goroutine.
	acked, duplicates, failed, retried atomic.Uint64
	// batched counts, of acked, the values a fast batch's ack settled.
	batched atomic.Uint64
	// js is the JetStream context of the fast batches; fast is set by New
	// when the stream allows them and FastBatches is FastBatchesAuto, and
	// cleared when the stream refuses one.
	js   jetstream.JetStream
	fast atomic.Bool
	// outage is set when an attempt fails or times out and cleared by the
	// next ack: while it is set the stream is taken not to answer, and
	// the retry goroutine probes it with one value, probe (the slot's
	// index, -1 for none yet), and holds the others (see scan).
	outage   atomic.Bool
	probe    atomic.Int32
	reporter reporter

	// phase is where the sink is in its life; only a Shutdown holding
	// shutdownSem moves it, forward only, from phaseOpen to
	// phaseAbandoned (its ctx ended) or phaseSettled (everything settled),
	// and from phaseAbandoned to phaseSettled (a later Shutdown counted
	// what the rings held as failed). From phaseAbandoned on, nothing is
	// published and every value taken from a ring counts as failed with
	// abandonReason (set before the phase): a publish loads the phase
	// under its slot's lock, and the Shutdown that abandons takes every
	// slot's lock in turn, so a publish either happened before (and
	// Shutdown fails its slot) or sees it. Flush returns ErrShutdown from
	// either phase on.
	phase         atomic.Uint32
	abandonReason error

	wake      chan struct{} // one slot: a poke for the retry goroutine
	stop      chan struct{} // closed to stop the retry goroutine
	retryDone chan struct{} // closed when it has exited
	stopOnce  sync.Once

	// shutdownSem serialises Shutdown calls.
	shutdownSem serial.Slot
}

// The phases of a Sink (Sink.phase).
const (
	phaseOpen uint32 = iota
	phaseAbandoned
	phaseSettled
)

// stopped reports whether a Shutdown has stopped the sink: it settled
// everything, or gave up on what was in flight.
func (s *Sink[T]) stopped() bool { return s.phase.Load() != phaseOpen }

// transport publishes one message: the seam between the sink's accounting
// and the NATS connection, which the tests replace with a fake.
type transport interface {
	publish(subject, reply string, hdr nats.Header, payload []byte) error
}

// connTransport publishes on a NATS connection. PublishMsg copies the
// header and the payload into the connection's buffer before it returns.
type connTransport struct{ nc *nats.Conn }

func (t connTransport) publish(subject, reply string, hdr nats.Header, payload []byte) error {
	m := nats.Msg{Subject: subject, Reply: reply, Header: hdr, Data: payload}
	return t.nc.PublishMsg(&m)
}

// New validates cfg, subscribes to an inbox of its own on js's connection
// for the stream's acks, and starts the sink's drain workers and a retry
// goroutine. It returns an error wrapping [ErrInvalidConfig] that names the
// field and the value of every invalid field (of cfg, and of the sink's
// knobs as sink.New checks them); nothing is started then.
//
// New then checks the stream (Config.Stream, or the one that captures
// Subject; unless SkipStreamCheck): that it exists, captures Subject (with
// Stream set, it may be a stream that does not), acks, and keeps
// duplicates for at least RetryBudget + AckTimeout. It returns an error
// wrapping [ErrStreamUnsuitable] that says what is wrong, or the
// JetStream API's error when the server does not answer within 5 s.
//
// The Sink does not own the connection: close it after [Sink.Shutdown]. A
// Sink dropped without Shutdown keeps its goroutines and its subscription.
// A value published to a subject no stream captures is retried
// (jetstream.ErrNoStreamResponse) and then counted as failed.
func New[T any](js jetstream.JetStream, cfg Config[T]) (*Sink[T], error) {
	var nc *nats.Conn
	if js != nil {
		nc = js.Conn()
	}
	st, err := cfg.settle()
	errs := fielderr.New(ErrInvalidConfig)
	errs.Wrap(err)
	// The sink's own fields, named in the same error as natssink's.
	errs.Wrap(cfg.sinkConfig(DefaultName).Check())
	switch {
	case js == nil:
		errs.Add("js", "nil", "a sink needs a JetStream context")
	case nc == nil:
		errs.Add("js", fmt.Sprintf("%T", js), "it has no connection")
	case nc.IsClosed():
		errs.Add("js", nc.Opts.Name, "its connection is closed")
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	s := newSink(st, connTransport{nc}, nc.NewInbox())
	// The subscription reaches the server before any publish that follows
	// it on this connection, so it is there before the first ack.
	sub, err := nc.Subscribe(s.inbox+".>", func(m *nats.Msg) {
		s.onAck(m.Subject, m.Header.Get("Status"), m.Data)
	})
	if err != nil {
		return nil, fmt.Errorf("natssink: subscribing to the ack inbox: %w", err)
	}
	// The acks in flight are bounded by the slots (and the attempts of
	// each), so the client's buffer for them needs no limit of its own;
	// with one, acks beyond it would be dropped and retried.
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("natssink: the ack inbox's limits: %w", err)
	}
	s.unsub = sub.Unsubscribe
	if err := s.start(cfg); err != nil {
		_ = sub.Unsubscribe()
		return nil, err
	}
	if !cfg.SkipStreamCheck {
		batched, err := checkStream(js, st.stream, st.subject, st.retryBudget+st.ackTimeout)
		if err != nil {
			_ = s.Shutdown(context.Background()) // nothing was pushed: it returns at once
			return nil, err
		}
		// Before the first push: the workers see it with the values.
		s.js = js
		s.fast.Store(batched && st.fastBatches == FastBatchesAuto)
	}
	return s, nil
}

// newSink builds a Sink that publishes through tr, without the sink and
// the retry goroutine (start starts them).
func newSink[T any](st settings[T], tr transport, inbox string) *Sink[T] {
	s := &Sink[T]{
		cfg:         st,
		transport:   tr,
		inbox:       inbox,
		epoch:       time.Now(),
		slots:       newSlotTable(st.maxInFlight),
		wake:        make(chan struct{}, 1),
		stop:        make(chan struct{}),
		retryDone:   make(chan struct{}),
		shutdownSem: serial.New(),
	}
	s.reporter.poke, s.reporter.onError, s.reporter.name, s.reporter.logger = s.poke, st.onError, st.name, st.logger
	s.probe.Store(-1)
	s.pool = newPool(st.maxInFlight, st.maxInFlightBytes, func(idx int32) { s.slots.ensure(idx, inbox, st.stream) })
	return s
}

// start starts the sink's workers and the retry goroutine.
func (s *Sink[T]) start(cfg Config[T]) error {
	sk, err := sink.New(cfg.sinkConfig(s.cfg.name), drainAction[T]{s})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	s.sink = sk
	s.reporter.start()
	go s.retryLoop()
	return nil
}

// Push hands v to the sink's rings: it is [sink.Sink.Push], one lock-free
// push into the ring of the CPU the caller runs on, with no allocation and
// no shared counter touched. A push never waits on the destination,
// however slow: a full ring sheds, and a push parks only while its drain
// worker is short of CPU behind a destination that keeps up (or, with
// Spill, while the spiller moves values to disk), for at most HandOffWait
// in all (sink's "What a push waits for"). It returns false when that ring
// and the next were full, or Shutdown has begun: v is then dropped and
// counted (Stats().Dropped). True means v was accepted, not yet published.
func (s *Sink[T]) Push(v T) bool { return s.sink.Push(v) }

// PushWait hands v to the sink's rings as Push does when there is room, and
// otherwise waits for room until ctx ends ([sink.Sink.PushWait]: the caller
// parks, the drain workers wake it as they free slots). It returns nil when
// v was accepted (not yet published); ctx.Err() when ctx ended first, v
// then dropped and counted in Stats().Dropped and Stats().WaitedOut; an
// error wrapping ErrShutdown (and sink.ErrShutdown) once Shutdown has
// begun, v counted as dropped. Use it for values worth a bounded wait
// (a burst that would otherwise be shed while JetStream is slow to ack);
// Push for the rest. Without room it allocates the waiter and its channel.
func (s *Sink[T]) PushWait(ctx context.Context, v T) error {
	err := s.sink.PushWait(ctx, v)
	if errors.Is(err, sink.ErrShutdown) {
		return errPushAfterShutdown
	}
	return err
}

// Flush waits until every value accepted before the call has been acked by
// the stream or counted as failed. It returns nil then, ctx.Err() when ctx
// ends first, and an error wrapping ErrShutdown (and sink.ErrShutdown)
// once Shutdown has stopped the workers.
// Producers may keep pushing; what they push during the call may or may
// not be settled when it returns. Flush waits by polling (20 µs to 1 ms).
func (s *Sink[T]) Flush(ctx context.Context) error {
	if ctx == nil {
		panic("natssink: Flush with a nil ctx")
	}
	if s.stopped() {
		return errFlushAfterShutdown
	}
	if err := s.sink.Flush(ctx); err != nil {
		if errors.Is(err, sink.ErrShutdown) {
			return errFlushAfterShutdown
		}
		return err
	}
	// Every value accepted before the call has been handed to a Drain
	// call that has returned: each is settled, or has a slot and a
	// sequence number no greater than this.
	last := s.seq.Load()
	return waitUntil(ctx, func() bool { return !s.slots.anyAtOrBelow(s.pool.highWater.Load(), last) })
}

// Shutdown stops the sink: it closes the rings (a push from then on is
// dropped and counted), publishes what they hold, waits for every value
// in flight to be acked or counted as failed (retries included), stops
// the retry goroutine and unsubscribes from the ack inbox. It returns nil
// then; from that point Acked + Failed + Dropped == Pushed, and every later
// call returns nil.
//
// When ctx ends first, Shutdown returns an error wrapping ctx.Err(). It
// gives up on the values in flight (counted as failed with [ErrShutdown]:
// the stream may still store some of them), and nothing is published
// afterwards. Values the rings still hold stay there (Stats().Queued); a
// later Shutdown counts them as failed without publishing them, and
// returns nil once it has. With Config.Sink.Spill, the rings' values go
// to disk instead, with those already there: they stay in Queued, and
// are the next sink's on the directory. Calls are serialised. Shutdown panics with a
// nil ctx. It does not close the NATS connection.
func (s *Sink[T]) Shutdown(ctx context.Context) error {
	if ctx == nil {
		panic("natssink: Shutdown with a nil ctx")
	}
	if err := s.shutdownSem.Take(ctx); err != nil {
		return fmt.Errorf("natssink: Shutdown waited for another Shutdown: %w", err)
	}
	defer s.shutdownSem.Release()
	if s.phase.Load() == phaseSettled {
		return nil
	}
	err := s.sink.Shutdown(ctx)
	if err == nil {
		// No Drain call is running or will run: the slots only empty.
		err = waitUntil(ctx, func() bool { return s.inflight.Load() == 0 })
		if err != nil {
			err = fmt.Errorf("natssink: Shutdown ended with %d values awaiting their acks: %w", s.inflight.Load(), err)
		}
	}
	if err != nil {
		s.abandon(ctx.Err())
		return err
	}
	// No value is in flight: the retry goroutine has nothing to publish
	// and stops at once.
	s.stopRetrying(time.Time{})
	s.phase.Store(phaseSettled)
	if unsubErr := s.closeInbox(); unsubErr != nil && !errors.Is(unsubErr, nats.ErrConnectionClosed) {
		// Nothing is lost: every value is settled. Log it, as an error of
		// the connection's rather than of the Shutdown.
		s.reporter.log().Warn("natssink: unsubscribing from the ack inbox", "sink", s.cfg.name, "err", unsubErr)
	}
	if !s.reporter.finish(s.now(), ctx.Done()) {
		return fmt.Errorf("natssink: every value is settled, but OnError has not returned with the last report: %w", context.Cause(ctx))
	}
	return nil
}

// closeInbox unsubscribes from the ack inbox, once.
func (s *Sink[T]) closeInbox() error {
	s.unsubOnce.Do(func() {
		if s.unsub != nil {
			s.unsubErr = s.unsub()
		}
	})
	return s.unsubErr
}

// abandon is the end of a Shutdown whose ctx ended: nothing is published
// any more, and every value in flight is counted as failed. A slot locked
// by a publish that blocks in the client is not waited for: its holder
// gives its value up when the publish returns (unlockSettled). abandon
// takes at most abandonGrace beyond the ctx.
func (s *Sink[T]) abandon(cause error) {
	s.abandonReason = fmt.Errorf("%w: %w", ErrShutdown, cause)
	s.phase.Store(phaseAbandoned)
	deadline := time.Now().Add(abandonGrace)
	s.stopRetrying(deadline)
	var busy []int32
	s.slots.each(func(idx int32, sl *slot) {
		if sl.seq.Load() == 0 {
			// Free, or taken by a publish that will see the phase (it
			// loads it under the slot's lock, after taking the slot).
			return
		}
		if !sl.mu.TryLock() {
			busy = append(busy, idx)
			return
		}
		s.unlockSettled(sl, idx)
	})
	// A holder that loaded the phase before it was set may be about to
	// unlock: look again at those for the grace period; one still locked
	// then is a publish blocked in the client, which sees the phase when it
	// returns.
	for len(busy) > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
		left := busy[:0]
		for _, idx := range busy {
			sl := s.slots.get(idx)
			if sl.seq.Load() == 0 {
				continue
			}
			if !sl.mu.TryLock() {
				left = append(left, idx)
				continue
			}
			s.unlockSettled(sl, idx)
		}
		busy = left
	}
	grace, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	s.reporter.finish(s.now(), grace.Done())
	_ = s.closeInbox()
}

// abandonGrace is how long a Shutdown whose ctx ended may still take.
const abandonGrace = 50 * time.Millisecond

// stopRetrying stops the retry goroutine and waits for it until deadline
// (a zero deadline: as long as it takes). It reports whether it stopped.
func (s *Sink[T]) stopRetrying(deadline time.Time) bool {
	s.stopOnce.Do(func() { close(s.stop) })
	if deadline.IsZero() {
		<-s.retryDone
		return true
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-s.retryDone:
		return true
	case <-t.C:
		return false
	}
}

// errPushAfterShutdown is PushWait's error once Shutdown has begun: it
// wraps both packages' ErrShutdown.
var errPushAfterShutdown = fmt.Errorf("%w: PushWait after Shutdown (%w)", ErrShutdown, sink.ErrShutdown)

// errFlushAfterShutdown is Flush's error once Shutdown has stopped the
// workers: natssink's ErrShutdown and the sink's.
var errFlushAfterShutdown = fmt.Errorf("%w: Flush after Shutdown (%w)", ErrShutdown, sink.ErrShutdown)

// now returns the time since the sink's epoch, from the monotonic clock.
func (s *Sink[T]) now() int64 { return int64(time.Since(s.epoch)) }

// waitUntil polls cond, with a backoff from 20 µs to 1 ms, until it holds
// (nil) or ctx ends (ctx.Err()).
func waitUntil(ctx context.Context, cond func() bool) error {
	return backoff.Poll(ctx, 20*time.Microsecond, time.Millisecond, nil, nil, cond)
}
