package natssink

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/nats-io/nats.go"
)

// msgIDHeader is the header by which JetStream recognises a message it
// already holds (within the stream's duplicate window).
const msgIDHeader = "Nats-Msg-Id"

// slot is one value in flight: published and awaiting its ack, or awaiting
// a retry. Its fields are guarded by mu, and every publish of its payload
// is made holding mu, so a slot is never reused while a publish reads it.
type slot struct {
	mu sync.Mutex
	// seq is the sequence number of the value the slot holds; 0 while the
	// slot is free. Stored under mu; Flush loads it without mu (a value
	// settled between its load and the next is simply seen as settled).
	seq *atomic.Uint64
	// due is when the retry goroutine acts on the slot, in ns since the
	// sink's epoch: the ack deadline of the attempt in flight, or the time
	// of the retry; 0 while free. Stored under mu; the retry goroutine
	// loads it without mu to pass over the slots with nothing due, then
	// looks again under mu.
	due *atomic.Int64
	// (seq and due point into the slot's chunk, where they are scanned.)

	backingOff bool        // awaiting a retry, not an ack
	attempts   int         // publishes made
	first      int64       // when the first was made (ns since the epoch)
	subject    string      // the value's subject, for the retries
	reply      string      // the ack's subject, inbox.seq.slot.attempt: a view of name
	id         []string    // one element: the Nats-Msg-Id, nuid.seq (a view of name), or msgID
	msgID      string      // the id MsgIDOf gave the value, or ""
	stream     []string    // one element: Config.Stream, for Nats-Expected-Stream
	hdr        nats.Header // {Nats-Msg-Id: id}, reused
	payload    []byte      // the encoded value; the buffer is kept for the slot's next value (up to keepBuffer)
	held       int         // the bytes of payload counted in the pool's bytes
	err        error       // the reason the last attempt failed

	// name holds the bytes of reply and id, which are strings over it
	// (unsafe.String) rather than copies, to save an allocation per value.
	// That is sound because nothing keeps those strings past the slot's
	// value: they go only to the transport, whose PublishMsg copies the
	// reply subject and the header into the connection's buffer before it
	// returns, and into reply and id, which release clears; name is
	// rewritten only under mu, by the next publish of this slot.
	name []byte
}

func (sl *slot) init(inbox, stream string, seq *atomic.Uint64, due *atomic.Int64) {
	sl.seq, sl.due = seq, due
	sl.id = make([]string, 1)
	sl.hdr = nats.Header{msgIDHeader: sl.id}
	if stream != "" {
		sl.stream = []string{stream}
		sl.hdr[expectedStreamHeader] = sl.stream
	}
	// inbox, then three dots and three decimal numbers of at most 20 digits.
	sl.name = make([]byte, 0, len(inbox)+3+3*20)
}

// drainAction is the sink.Action of the Sink: the drain workers call it
// with each batch.
type drainAction[T any] struct{ s *Sink[T] }

func (a drainAction[T]) Drain(ctx context.Context, batch []T) { a.s.drain(ctx, batch) }

// drain publishes each value of batch into a slot of its own, waiting for a
// free slot while MaxInFlight values are in flight. It returns once every
// value is published (or failed), not when they are acked: the acks come
// to onAck. When ctx ends while it waits (Shutdown's ctx ended), the values
// not yet published are counted as failed.
func (s *Sink[T]) drain(ctx context.Context, batch []T) {
	// With fast batches on (and the stream answering), the values are
	// prepared into their slots here and published together by
	// publishBatch; otherwise each is published as it is prepared.
	var held []heldSlot
	fast := s.fast.Load() && !s.outage.Load()
	if fast {
		held = make([]heldSlot, 0, len(batch))
	}
	// A runtime.Goexit in Encode or SubjectOf ends this call (and the
	// worker's goroutine, which the sink replaces): prepare settles its
	// value, and the values after it are counted here; those already
	// prepared for a batch go to the retry path, unpublished.
	i, returned := 0, false
	defer func() {
		if !returned {
			if i+1 < len(batch) {
				s.failUnpublished(len(batch)-i-1, errGoexit)
			}
			s.hand(held, errGoexit)
		}
	}()
	now := s.now()
	for ; i < len(batch); i++ {
		idx, ok := s.pool.take()
		if !ok {
			// At a bound: wait for an ack (or a failure) to free a slot
			// or bytes. A batch's prepared values go out first: their
			// acks may be what frees it.
			if len(held) > 0 {
				s.publishBatch(ctx, held)
				held = held[:0]
			}
			if idx, ok = s.waitForRoom(ctx); !ok {
				// Only Shutdown's ctx ending cancels Drain's.
				s.failUnpublished(len(batch)-i, errUnpublished)
				returned = true
				return
			}
			now = s.now()
		}
		if s.inflight.Add(1) == 1 {
			s.poke() // the retry goroutine parks while nothing is in flight
		}
		if !fast {
			s.publishFirst(idx, &batch[i], now)
			continue
		}
		sl := s.slots.get(idx)
		sl.mu.Lock()
		if s.prepare(sl, idx, &batch[i], now) {
			held = append(held, heldSlot{idx, sl.seq.Load()}) // due stays 0: publishBatch settles it
		}
		s.unlockSettled(sl, idx)
	}
	returned = true
	if len(held) > 0 {
		s.publishBatch(ctx, held)
	}
}

// hand gives the prepared slots of a batch that will not be published to
// the retry path: each is published at the next scan, one message.
func (s *Sink[T]) hand(held []heldSlot, reason error) {
	now := s.now()
	for _, h := range held {
		sl := s.slots.get(h.idx)
		sl.mu.Lock()
		if sl.seq.Load() == h.seq {
			sl.err, sl.backingOff, sl.attempts = reason, true, 0
			sl.due.Store(max(now, 1))
		}
		s.unlockSettled(sl, h.idx)
	}
}

// waitForRoom waits for a free slot (and bytes) until ctx ends.
func (s *Sink[T]) waitForRoom(ctx context.Context) (int32, bool) {
	p := s.pool
	p.waiters.Add(1)
	defer p.waiters.Add(-1)
	for {
		if idx, ok := p.take(); ok {
			p.signal() // another worker may wait, and room may be left
			return idx, true
		}
		select {
		case <-p.room:
		case <-ctx.Done():
			return 0, false
		}
	}
}

// publishFirst encodes v into slot idx and publishes it for the first
// time.
func (s *Sink[T]) publishFirst(idx int32, v *T, now int64) {
	sl := s.slots.get(idx)
	sl.mu.Lock()
	defer s.unlockSettled(sl, idx)
	if !s.prepare(sl, idx, v, now) {
		return
	}
	sl.due.Store(now + int64(s.cfg.ackTimeout))
	if err := s.transport.publish(sl.subject, sl.reply, sl.hdr, sl.payload); err != nil {
		s.attemptFailed(sl, idx, now, err)
	}
}

// prepare encodes v into slot idx and gives it its sequence number and
// its Nats-Msg-Id, as attempt 1. It reports whether the value is to be
// published now: false when it was settled (an Encode error or panic, a
// Shutdown) or is held unpublished through an outage. The caller holds
// sl.mu and stores the slot's due time.
func (s *Sink[T]) prepare(sl *slot, idx int32, v *T, now int64) bool {
	encoded := false
	defer func() {
		if !encoded { // runtime.Goexit in Encode or SubjectOf
			sl.subject, sl.err = s.cfg.subject, errGoexit
			s.giveUp(sl, idx, now)
		}
	}()
	if s.stopped() {
		encoded = true
		sl.subject, sl.err = s.cfg.subject, ErrShutdown
		s.giveUp(sl, idx, now)
		return false
	}
	subject, payload, err := s.encode(sl, v)
	encoded = true
	if payload == nil {
		payload = sl.payload[:0] // an empty payload, never the last value's bytes
	}
	sl.payload = payload
	sl.held = len(payload)
	s.pool.bytes.Add(int64(sl.held))
	if err != nil {
		sl.subject, sl.err = subject, err
		s.giveUp(sl, idx, now)
		return false
	}
	seq := s.seq.Add(1)
	sl.subject = subject
	sl.first, sl.err = now, nil
	sl.seq.Store(seq)
	if s.outage.Load() {
		// The stream does not answer: the value waits, unpublished, for
		// the probe's ack (see scan).
		sl.attempts, sl.backingOff = 0, true
		sl.due.Store(max(now, 1)) // 0 is "not due": the sink's clock starts at 0
		return false
	}
	sl.setName(s.inbox, seq, idx, 1)
	sl.attempts, sl.backingOff = 1, false
	return true
}

// republish publishes the value of slot idx again (attempt attempts+1),
// or for the first time when an outage held it (attempts 0).
// The caller holds sl.mu.
func (s *Sink[T]) republish(sl *slot, idx int32, now int64) {
	if sl.attempts > 0 { // not a value held unpublished through an outage
		s.retried.Add(1)
	}
	sl.attempts++
	sl.setName(s.inbox, sl.seq.Load(), idx, sl.attempts)
	sl.backingOff = false
	sl.due.Store(now + int64(s.cfg.ackTimeout))
	if err := s.transport.publish(sl.subject, sl.reply, sl.hdr, sl.payload); err != nil {
		s.attemptFailed(sl, idx, now, err)
	}
}

// attemptFailed handles the failure of the attempt in flight for slot idx:
// it schedules a retry, after a backoff, while the attempts and the budget
// allow and err is not permanent, and gives the value up otherwise. The
// caller holds sl.mu.
func (s *Sink[T]) attemptFailed(sl *slot, idx int32, now int64, err error) {
	sl.err = err
	if permanent(err) || sl.attempts >= s.cfg.attempts {
		s.giveUp(sl, idx, now)
		return
	}
	s.outage.Store(true)
	at := now + int64(s.backoff(sl.attempts))
	if at-sl.first > int64(s.cfg.retryBudget) {
		s.giveUp(sl, idx, now)
		return
	}
	sl.backingOff = true
	sl.due.Store(at)
}

// timedOut handles an attempt whose ack did not come by its deadline: it is
// retried at once while the attempts and the budget allow. The caller holds
// sl.mu.
func (s *Sink[T]) timedOut(sl *slot, idx int32, now int64) {
	sl.err = ErrAckTimeout
	if sl.attempts >= s.cfg.attempts || now-sl.first > int64(s.cfg.retryBudget) {
		s.giveUp(sl, idx, now)
		return
	}
	s.outage.Store(true)
	s.republish(sl, idx, now)
}

// hold keeps the value of slot idx, due while the stream does not answer
// and another value probes it, unpublished until the next scan: counted as
// failed once its RetryBudget has passed, as a retry would be. The caller
// holds sl.mu.
func (s *Sink[T]) hold(sl *slot, idx int32, now int64) {
	if now-sl.first > int64(s.cfg.retryBudget) {
		if sl.err == nil {
			sl.err = ErrAckTimeout
		}
		s.giveUp(sl, idx, now)
		return
	}
	sl.backingOff = true
	sl.due.Store(now + int64(s.cfg.tick))
}

// acked settles slot idx as stored by the stream. The caller holds sl.mu.
func (s *Sink[T]) ack(sl *slot, idx int32, duplicate bool) {
	s.acked.Add(1)
	if duplicate {
		s.duplicates.Add(1)
	}
	s.release(sl, idx)
	if s.outage.Load() && s.outage.CompareAndSwap(true, false) {
		s.poke() // the held values go out at the next scan
	}
}

// giveUp counts the value of slot idx as failed with the reason sl.err and
// frees the slot. The caller holds sl.mu.
func (s *Sink[T]) giveUp(sl *slot, idx int32, now int64) {
	f := &failure{subject: sl.subject, attempts: sl.attempts, err: sl.err}
	if sl.attempts > 0 {
		f.elapsed = time.Duration(now - sl.first)
	}
	s.failed.Add(1)
	s.reporter.record(1, f)
	s.release(sl, idx)
}

// failUnpublished counts as failed n values that a worker held, before
// they got a slot, when Shutdown's ctx ended or a Goexit ended the Drain.
func (s *Sink[T]) failUnpublished(n int, reason error) {
	s.failed.Add(uint64(n))
	s.reporter.record(uint64(n), &failure{subject: s.cfg.subject, err: reason})
}

// errGoexit is the reason of a value whose Encode or SubjectOf called
// runtime.Goexit, and of the values after it in its batch.
var errGoexit = fmt.Errorf("%w: runtime.Goexit in Encode or SubjectOf ended the batch", ErrEncodePanicked)

// unlockSettled unlocks slot idx, after giving its value up when a
// Shutdown has given up on the values in flight (the slot was locked by a
// publish, or an ack, when that Shutdown went over the slots).
func (s *Sink[T]) unlockSettled(sl *slot, idx int32) {
	if s.stopped() && sl.seq.Load() != 0 {
		sl.err = s.abandonReason
		s.giveUp(sl, idx, s.now())
	}
	sl.mu.Unlock()
}

// errUnpublished is the reason of the values a worker held when Shutdown's
// ctx ended.
var errUnpublished = fmt.Errorf("%w: its ctx ended while the value waited for room in flight", ErrShutdown)

// release frees slot idx. The caller holds sl.mu.
func (s *Sink[T]) release(sl *slot, idx int32) {
	sl.seq.Store(0)
	sl.due.Store(0)
	sl.subject, sl.reply, sl.id[0], sl.msgID, sl.err = "", "", "", "", nil
	sl.attempts = 0
	if cap(sl.payload) > keepBuffer {
		sl.payload = nil // one large value does not pin its size in the slot
	}
	held := sl.held
	sl.held = 0
	s.probe.CompareAndSwap(idx, -1) // a probe settled: the next due value probes
	s.inflight.Add(-1)
	s.pool.put(idx, held)
}

// keepBuffer is the largest payload buffer a free slot keeps for its next
// value; a larger one is left to the garbage collector.
const keepBuffer = 4 << 10

// encode returns v's subject and appends its payload to the slot's
// buffer, sets the slot's message id (MsgIDOf) and headers (HeadersOf),
// and turns a panic of any of them into an error. The caller holds sl.mu.
func (s *Sink[T]) encode(sl *slot, v *T) (subject string, payload []byte, err error) {
	dst := sl.payload[:0]
	subject = s.cfg.subject
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", ErrEncodePanicked, p)
		}
	}()
	if s.cfg.subjectOf != nil {
		subject = s.cfg.subjectOf(*v)
		if !validSubject(subject) {
			return subject, dst, fmt.Errorf("natssink: SubjectOf returned %q, not a subject to publish to: %w", subject, nats.ErrBadSubject)
		}
	}
	if s.cfg.msgIDOf != nil {
		if sl.msgID = s.cfg.msgIDOf(*v); sl.msgID == "" {
			return subject, dst, errEmptyMsgID
		}
	}
	if s.cfg.headersOf != nil {
		h := s.cfg.headersOf(*v)
		clear(sl.hdr)
		for k, vals := range h {
			sl.hdr[k] = vals
		}
		sl.hdr[msgIDHeader] = sl.id // the sink's own headers win
		if s.cfg.stream != "" {
			sl.hdr[expectedStreamHeader] = sl.stream
		}
	}
	payload, err = s.cfg.encode(dst, *v)
	if err != nil {
		err = fmt.Errorf("natssink: Encode: %w", err)
	}
	return subject, payload, err
}

// errEmptyMsgID is the reason of a value whose MsgIDOf returned "".
var errEmptyMsgID = errors.New("natssink: MsgIDOf returned an empty id")

// setName sets the slot's reply subject, inbox.seq.slot.attempt, and its
// Nats-Msg-Id, nuid.seq, which is part of it (the inbox's last token, a
// NUID drawn for this sink, and the value's sequence number): no
// allocation. The caller holds sl.mu.
func (sl *slot) setName(inbox string, seq uint64, idx int32, attempt int) {
	idStart := strings.LastIndexByte(inbox, '.') + 1
	b := append(sl.name[:0], inbox...)
	b = append(b, '.')
	b = strconv.AppendUint(b, seq, 10)
	idLen := len(b)
	b = append(b, '.')
	b = strconv.AppendUint(b, uint64(idx), 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, uint64(attempt), 10)
	sl.name = b // the same array: its capacity holds the longest name
	sl.reply = unsafe.String(unsafe.SliceData(b), len(b))
	sl.id[0] = sl.reply[idStart:idLen]
	if sl.msgID != "" {
		sl.id[0] = sl.msgID
	}
}

// backoff returns the wait before the retry that follows attempt n:
// RetryBackoff doubled n-1 times, at most 16 times RetryBackoff, drawn
// between half and all of it.
func (s *Sink[T]) backoff(n int) time.Duration {
	d := s.cfg.retryBackoff << min(n-1, 4) // 16 = 2^4
	d = min(d, maxBackoffFactor*s.cfg.retryBackoff)
	return d/2 + rand.N(d/2+1)
}

// poke wakes the retry goroutine, without waiting.
func (s *Sink[T]) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
