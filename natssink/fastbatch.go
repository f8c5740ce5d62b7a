package natssink

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/synadia-io/orbit.go/jetstreamext"
)

// FastBatches says how the drain workers publish: through JetStream's
// fast-ingest batches where the stream allows them, or one message per
// value. See the package documentation (Fast batches) for what a batch
// promises and costs.
type FastBatches int

const (
	// FastBatchesOff, the default, publishes one message per value,
	// whatever the stream allows: on the embedded server, with the
	// default BatchSize (256), it carries more values per second than
	// fast batches, for less CPU (see the package documentation, Fast
	// batches).
	FastBatchesOff FastBatches = iota
	// FastBatchesAuto publishes each batch a drain worker takes (up to
	// Sink.BatchSize values) as one fast-ingest batch when New's check of
	// the stream finds it allows them (allow_batched,
	// jetstream.StreamConfig.AllowBatchPublish, nats-server 2.14+), and
	// one message per value otherwise (SkipStreamCheck, a SubjectOf
	// without Stream, a stream without allow_batched).
	FastBatchesAuto
)

// String returns the constant's name.
func (f FastBatches) String() string {
	switch f {
	case FastBatchesOff:
		return "FastBatchesOff"
	case FastBatchesAuto:
		return "FastBatchesAuto"
	}
	return fmt.Sprintf("FastBatches(%d)", int(f))
}

// The flow control asked of the server for a batch: an ack every
// fastFlow messages, and the publisher waits for one when
// fastOutstanding acks are due. With fastFlow x fastOutstanding at least
// the default BatchSize (256), a batch waits for two acks only: its first
// message's and its commit's. The server lowers the flow when several
// batches share the stream (500 / batches in flight).
const (
	fastFlow        = 128
	fastOutstanding = 4
)

// heldSlot is a slot prepared for a fast batch and the sequence number of
// its value, which tells whether the slot still holds that value when the
// batch ends (a Shutdown whose ctx ended may have given it up).
type heldSlot struct {
	idx int32
	seq uint64
}

// publishBatch publishes the prepared slots as one fast-ingest batch and
// settles them. The server's flow ack at batch sequence n (gap: fail)
// means it stored the batch's messages 1..n
// (TestAFastBatchFlowAckMeansTheValuesUpToItAreStored), and so does its
// commit ack of n messages (BatchAck.BatchSize): a value the stream
// refuses (a full stream, a size over its limit, a subject that another
// stream or none captures) ends the batch before it, and the stream
// commits those before it and drops those after, with a nil error from
// Close (TestAValueRefusedInAFastBatchIsNeverCountedAcked). Values 1..n
// are acked. The values after n, and all after the last flow ack when the
// batch ends with an error (an ack timeout, a leader that died), are
// published again at the next scan, one message each with the same
// Nats-Msg-Id, on the retry path, where each value's own answer decides:
// a value the stream stored without the ack reaching the sink is
// recognised and stored once
// (TestAFastBatchStoresAValueSentAgainInALaterBatchOnce), and a refused
// one fails with the server's reason or is retried. The prepared slots
// have no due time (0), so the retry goroutine leaves them alone until
// then. A server that ends the batch (a refusal) while the worker is
// still adding to it closes the publisher, which drops that commit's
// count: the values after the last flow ack are then unknown, and with
// no attempt left they fail though some may be stored
// (TestAttemptsOfOneFailsWhatACutFastBatchLeftUnacked).
func (s *Sink[T]) publishBatch(ctx context.Context, held []heldSlot) {
	acked, sent := 0, 0
	var reason batchReason // what the server said of the batch besides its acks
	fp, err := jetstreamext.NewFastPublisher(s.js, jetstreamext.FastPublishFlowControl{
		Flow: fastFlow, MaxOutstandingAcks: fastOutstanding, AckTimeout: s.cfg.ackTimeout,
	}, jetstreamext.WithFastPublisherErrorHandler(reason.record))
	for _, h := range held {
		if err != nil {
			break
		}
		sl := s.slots.get(h.idx)
		sl.mu.Lock()
		if sl.seq.Load() != h.seq || s.stopped() {
			s.unlockSettled(sl, h.idx)
			err = ErrShutdown
			break
		}
		// AddMsg copies the subject, the header and the payload into the
		// connection's buffer before it returns; it may then wait for a
		// flow ack (at most AckTimeout), holding the slot.
		m := nats.Msg{Subject: sl.subject, Header: sl.hdr, Data: sl.payload}
		var ack *jetstreamext.FastPubAck
		if ack, err = fp.AddMsg(&m); err == nil {
			sent++
			acked = max(acked, int(ack.AckSequence))
		}
		s.unlockSettled(sl, h.idx)
	}
	if err == nil && sent > 0 {
		var bAck *jetstreamext.BatchAck
		if bAck, err = fp.Close(ctx); err == nil {
			// The commit counts the messages stored, or held already: not
			// those after a refusal.
			acked = max(acked, int(min(bAck.BatchSize, uint64(sent))))
			if acked < sent {
				err = fmt.Errorf("the stream committed %d of the %d values of the batch: %w", acked, sent, reason.get())
			}
		}
	}
	acked = min(acked, sent)
	if err != nil {
		if errors.Is(err, jetstreamext.ErrFastBatchNotEnabled) || errors.Is(err, jetstreamext.ErrFastBatchInvalidPattern) {
			s.fast.Store(false) // the stream no longer allows them
		}
		err = fmt.Errorf("natssink: fast batch: %w", err)
	}
	now := s.now()
	for k, h := range held {
		sl := s.slots.get(h.idx)
		sl.mu.Lock()
		if sl.seq.Load() == h.seq {
			switch {
			case k < acked:
				s.batched.Add(1)
				s.ack(sl, h.idx, false)
			case k < sent && sl.attempts >= s.cfg.attempts:
				// Published once, unacked, and no retry allowed.
				sl.err = err
				s.giveUp(sl, h.idx, now)
			default:
				// Its own publish decides, at the next scan.
				sl.err, sl.backingOff = err, true
				sl.due.Store(max(now, 1))
			}
		}
		s.unlockSettled(sl, h.idx)
	}
}

// batchReason keeps the first error the server reported of a batch
// outside its acks (a message refused, one that no stream answered, a
// gap): the reason a commit counted fewer messages than were sent. It is
// written from the publisher's subscription, read by the worker.
type batchReason struct {
	mu  sync.Mutex
	err error
}

func (r *batchReason) record(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
}

// get returns the first error recorded, or errBatchCut.
func (r *batchReason) get() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		return errBatchCut
	}
	return r.err
}

// errBatchCut is the reason of the values a batch's commit did not count
// when the server said nothing else of them.
var errBatchCut = errors.New("the stream ended the batch before them")
