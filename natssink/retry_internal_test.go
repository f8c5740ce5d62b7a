package natssink

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/sink"
)

func TestAValueIsPublishedOnceWhenItsAckComes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tr := newFake(t, Config[int]{})
		tr.setAnswer(ackAll)
		for i := range 10 {
			require.True(t, s.Push(i))
		}
		require.NoError(t, s.Flush(t.Context()))
		pubs := tr.all()
		require.Len(t, pubs, 10)
		ids := map[string]bool{}
		for i, p := range pubs {
			require.Equal(t, "test.values", p.subject)
			require.Equal(t, strconvItoa(i), p.payload, "one shard: in order")
			require.Equal(t, "test."+strconvItoa(i+1), p.id, "the inbox's last token and the sequence number")
			require.True(t, strings.HasPrefix(p.reply, "_INBOX."+p.id+"."), "the reply is the inbox, the sequence number, the slot and the attempt: %s", p.reply)
			require.Equal(t, 1, attemptOf(t, p.reply))
			require.False(t, ids[p.id])
			ids[p.id] = true
		}
		st := shutdown(t, s, 10)
		require.Equal(t, uint64(10), st.Acked)
		require.Zero(t, st.Retried)
	})
}

func strconvItoa(i int) string { b, _ := encodeInt(nil, i); return string(b) }

func TestAnAckThatDoesNotComeIsRetriedWithTheSameMsgIDThenGivenUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var r reports
		s, tr := newFake(t, Config[int]{AckTimeout: time.Second, Attempts: 3, RetryBudget: time.Minute, OnError: r.onError})
		start := time.Now()
		require.True(t, s.Push(7))
		synctest.Wait()
		require.Len(t, tr.all(), 1)
		require.Equal(t, uint64(1), s.Stats().InFlight)

		time.Sleep(3*time.Second + 100*time.Millisecond)
		synctest.Wait()
		pubs := tr.all()
		require.Len(t, pubs, 3, "Attempts = 3")
		for i, p := range pubs {
			require.Equal(t, pubs[0].id, p.id, "every attempt carries the value's Nats-Msg-Id")
			require.Equal(t, i+1, attemptOf(t, p.reply))
			require.Equal(t, "7", p.payload)
			// Each retry follows the AckTimeout of the one before, within
			// the retry goroutine's tick.
			at := p.at.Sub(start)
			require.GreaterOrEqual(t, at, time.Duration(i)*time.Second)
			require.LessOrEqual(t, at, time.Duration(i)*time.Second+s.cfg.tick)
		}
		st := s.Stats()
		require.Equal(t, uint64(1), st.Failed)
		require.Equal(t, uint64(2), st.Retried)
		require.Zero(t, st.InFlight)
		require.Contains(t, st.LastError, "after 3 attempt(s)")
		got, _ := r.all()
		require.Len(t, got, 1)
		require.ErrorIs(t, got[0], ErrAckTimeout)
		require.Equal(t, uint64(1), got[0].Failed)
		shutdown(t, s, 1)
	})
}

func TestTheBudgetEndsRetriesBeforeTheAttemptsDo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tr := newFake(t, Config[int]{AckTimeout: time.Second, Attempts: 100, RetryBudget: 2500 * time.Millisecond})
		require.True(t, s.Push(1))
		time.Sleep(10 * time.Second)
		synctest.Wait()
		// Attempts at 0, 1 s and 2 s; at 3 s the budget (2.5 s) has run out.
		require.Len(t, tr.all(), 3)
		st := shutdown(t, s, 1)
		require.Equal(t, uint64(1), st.Failed)
	})
}

func TestARefusalIsRetriedAfterADoublingJitteredBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const backoff = 100 * time.Millisecond
		s, tr := newFake(t, Config[int]{RetryBackoff: backoff, Attempts: 7, RetryBudget: time.Minute})
		tr.setAnswer(func(published) (string, string, bool) { return "", busyAck, true })
		require.True(t, s.Push(1))
		time.Sleep(10 * time.Second)
		synctest.Wait()
		pubs := tr.all()
		require.Len(t, pubs, 7)
		for i := 1; i < len(pubs); i++ {
			want := backoff << min(i-1, 4) // 100, 200, 400, 800, 1600, 1600 ms
			gap := pubs[i].at.Sub(pubs[i-1].at)
			require.GreaterOrEqual(t, gap, want/2, "retry %d", i)
			require.LessOrEqual(t, gap, want+s.cfg.tick, "retry %d", i)
		}
		st := shutdown(t, s, 1)
		require.Equal(t, uint64(1), st.Failed)
		require.Equal(t, uint64(6), st.Retried)
		require.Contains(t, st.LastError, "temporarily unavailable")
	})
}

// A retry that reaches a clustered stream while the first attempt with
// the same Nats-Msg-Id is still being replicated is refused with 409
// "duplicate message id is in process". The first attempt may yet be
// stored: a value counted as failed then would be in the stream too. It is
// retried, and the stream's answer to the retry (a duplicate ack) settles
// it. Found by TestClusterLeaderRestartLosesAndDuplicatesNothing.
func TestADuplicateInProcessIsRetriedNotGivenUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tr := newFake(t, Config[int]{AckTimeout: time.Second})
		tr.setAnswer(func(p published) (string, string, bool) {
			if attemptOf(t, p.reply) == 2 {
				return "", inProcessAck, true
			}
			return "", dupAck, attemptOf(t, p.reply) == 3
		})
		require.True(t, s.Push(1))
		time.Sleep(5 * time.Second)
		synctest.Wait()
		require.Len(t, tr.all(), 3, "a timeout, the 409, then a retry the stream answers")
		st := shutdown(t, s, 1)
		require.Equal(t, uint64(1), st.Acked)
		require.Equal(t, uint64(1), st.Duplicates)
		require.Zero(t, st.Failed)
	})
}

func TestNoRespondersIsRetriedAndReportedAsNoStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var r reports
		s, tr := newFake(t, Config[int]{Attempts: 2, OnError: r.onError})
		tr.setAnswer(func(published) (string, string, bool) { return "503", "", true })
		require.True(t, s.Push(1))
		time.Sleep(time.Second)
		synctest.Wait()
		require.Len(t, tr.all(), 2)
		st := shutdown(t, s, 1)
		require.Equal(t, uint64(1), st.Failed)
		got, _ := r.all()
		require.Len(t, got, 1)
		require.ErrorIs(t, got[0], jetstream.ErrNoStreamResponse)
	})
}

func TestPermanentErrorsAreNotRetried(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fail   error
		answer string
		want   error
	}{
		{name: "a payload over the server's limit", fail: nats.ErrMaxPayload, want: nats.ErrMaxPayload},
		{name: "a bad subject", fail: nats.ErrBadSubject, want: nats.ErrBadSubject},
		{name: "a closed connection", fail: nats.ErrConnectionClosed, want: nats.ErrConnectionClosed},
		{name: "a refusal by the stream", answer: refusedAck},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, tr := newFake(t, Config[int]{Attempts: 5})
				tr.fail = func(published) error { return tc.fail }
				if tc.answer != "" {
					tr.setAnswer(func(published) (string, string, bool) { return "", tc.answer, true })
				}
				require.True(t, s.Push(1))
				time.Sleep(10 * time.Second)
				synctest.Wait()
				require.Len(t, tr.all(), 1, "no retry")
				st := shutdown(t, s, 1)
				require.Equal(t, uint64(1), st.Failed)
				require.Zero(t, st.Retried)
				if tc.want != nil {
					require.ErrorIs(t, s.reporter.lastError(), tc.want)
				} else {
					apiErr, ok := errors.AsType[*jetstream.APIError](s.reporter.lastError())
					require.True(t, ok, "%v", s.reporter.lastError())
					require.Equal(t, 400, apiErr.Code)
				}
			})
		})
	}
}

func TestAPublishTheClientCannotTakeIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tr := newFake(t, Config[int]{})
		var n atomic.Int32
		tr.fail = func(published) error {
			if n.Add(1) <= 2 {
				return nats.ErrReconnectBufExceeded
			}
			return nil
		}
		tr.setAnswer(func(p published) (string, string, bool) { return "", okAck, attemptOf(t, p.reply) == 3 })
		require.True(t, s.Push(1))
		time.Sleep(5 * time.Second)
		synctest.Wait()
		require.Len(t, tr.all(), 3)
		st := shutdown(t, s, 1)
		require.Equal(t, uint64(1), st.Acked)
		require.Equal(t, uint64(2), st.Retried)
	})
}

func TestALateAckOfAnEarlierAttemptSettlesTheValueOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tr := newFake(t, Config[int]{AckTimeout: time.Second})
		require.True(t, s.Push(1))
		time.Sleep(time.Second + 100*time.Millisecond)
		synctest.Wait()
		pubs := tr.all()
		require.Len(t, pubs, 2)

		// A refusal of the first attempt, which the second replaced,
		// decides nothing: no backoff, no third attempt.
		s.onAck(pubs[0].reply, "", []byte(busyAck))
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		require.Len(t, tr.all(), 2)

		// The first attempt's success settles the value; the second's
		// answer, a duplicate, then finds the slot free.
		s.onAck(pubs[0].reply, "", []byte(okAck))
		s.onAck(pubs[1].reply, "", []byte(dupAck))
		st := shutdown(t, s, 1)
		require.Equal(t, uint64(1), st.Acked)
		require.Zero(t, st.Duplicates, "the duplicate came after the value was settled")
		require.Zero(t, st.Failed)
	})
}

func TestADuplicateAckCountsAsAcked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tr := newFake(t, Config[int]{})
		tr.setAnswer(func(published) (string, string, bool) { return "", dupAck, true })
		require.True(t, s.Push(1))
		st := shutdown(t, s, 1)
		require.Equal(t, uint64(1), st.Acked)
		require.Equal(t, uint64(1), st.Duplicates)
	})
}

func TestEncodeErrorsAndPanicsAreCountedAsFailed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bad := errors.New("cannot encode 13")
		s, tr := newFake(t, Config[int]{Encode: func(dst []byte, v int) ([]byte, error) {
			switch v {
			case 13:
				return dst, bad
			case 66:
				panic("66 is no number")
			}
			return encodeInt(dst, v)
		}})
		tr.setAnswer(ackAll)
		for _, v := range []int{1, 13, 2, 66, 3} {
			require.True(t, s.Push(v))
		}
		st := shutdown(t, s, 5)
		require.Equal(t, uint64(3), st.Acked)
		require.Equal(t, uint64(2), st.Failed)
		require.Len(t, tr.all(), 3, "what failed to encode is not published")
		require.ErrorIs(t, s.reporter.lastError(), ErrEncodePanicked)
		require.Contains(t, st.LastError, "66 is no number")
	})
}

func TestOnErrorIsCalledAtMostOnceASecondAndOnceMoreAtShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var r reports
		s, _ := newFake(t, Config[int]{
			Encode:  func([]byte, int) ([]byte, error) { return nil, errors.New("never") },
			OnError: r.onError,
		})
		// A failure every 100 ms for 3.45 s: 35 of them.
		for i := range 35 {
			require.True(t, s.Push(i))
			time.Sleep(100 * time.Millisecond)
		}
		synctest.Wait()
		shutdown(t, s, 35)
		got, at := r.all()
		var total uint64
		for i, g := range got {
			require.NotNil(t, g)
			total += g.Failed
			if i > 0 && i < len(got)-1 {
				require.GreaterOrEqual(t, at[i].Sub(at[i-1]), time.Second, "report %d", i)
			}
		}
		require.Equal(t, uint64(35), total, "every failure is in one report")
		require.Len(t, got, 5, "at 0 s, 1 s, 2 s, 3 s, and the rest at Shutdown")
	})
}

func TestAtMaxInFlightTheWorkerWaitsAndTheRingsShed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tr := newFake(t, Config[int]{MaxInFlight: 4, AckTimeout: time.Hour, Sink: sink.Config[int]{RingCapacity: 16, BatchSize: 8}})
		accepted := 0
		for i := range 100 {
			if s.Push(i) {
				accepted++
			}
		}
		synctest.Wait()
		require.Len(t, tr.all(), 4, "no more than MaxInFlight unacknowledged")
		st := s.Stats()
		require.Equal(t, uint64(4), st.InFlight)
		require.Equal(t, uint64(100), st.Pushed)
		require.Equal(t, uint64(100-accepted), st.Dropped)
		require.Positive(t, st.Dropped, "the producer never waited: the ring shed")
		require.Equal(t, uint64(accepted-4), st.Queued, "the rest waits in the ring and the worker's batch")

		// Acks free the slots; the worker goes on.
		tr.setAnswer(ackAll)
		for _, p := range tr.all() {
			s.onAck(p.reply, "", []byte(okAck))
		}
		st = shutdown(t, s, 100)
		require.Equal(t, uint64(accepted), st.Acked)
		require.Len(t, tr.all(), accepted)
	})
}

func TestFlushWaitsForTheAcks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tr := newFake(t, Config[int]{})
		for i := range 3 {
			require.True(t, s.Push(i))
		}
		var flushed atomic.Bool
		go func() {
			require.NoError(t, s.Flush(context.Background()))
			flushed.Store(true)
		}()
		time.Sleep(time.Second)
		synctest.Wait()
		require.Len(t, tr.all(), 3)
		require.False(t, flushed.Load(), "published is not acked")
		for _, p := range tr.all()[:2] {
			s.onAck(p.reply, "", []byte(okAck))
		}
		time.Sleep(time.Second)
		synctest.Wait()
		require.False(t, flushed.Load(), "one ack is still missing")
		s.onAck(tr.all()[2].reply, "", []byte(okAck))
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		require.True(t, flushed.Load())
		shutdown(t, s, 3)
	})
}

func TestAShutdownWhoseCtxEndsGivesUpWhatIsInFlightAndPublishesNothingMore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var r reports
		s, tr := newFake(t, Config[int]{MaxInFlight: 2, AckTimeout: time.Hour, OnError: r.onError, Sink: sink.Config[int]{RingCapacity: 64, BatchSize: 4}})
		for i := range 40 {
			require.True(t, s.Push(i))
		}
		synctest.Wait()
		require.Len(t, tr.all(), 2)

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err := s.Shutdown(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		synctest.Wait()
		st := s.Stats()
		require.Zero(t, st.InFlight)
		require.Equal(t, uint64(40), st.Pushed)
		require.Positive(t, st.Failed, "the values in flight and the worker's batch")
		require.Equal(t, uint64(40), st.Failed+st.Queued, "the rest is still in the ring: %+v", st)
		require.ErrorIs(t, s.reporter.lastError(), ErrShutdown)

		// A later ack changes nothing; a later Shutdown counts what the
		// ring held as failed without publishing it.
		s.onAck(tr.all()[0].reply, "", []byte(okAck))
		require.False(t, s.Push(99), "the rings are closed")
		st = shutdown(t, s, 41)
		require.Equal(t, uint64(40), st.Failed)
		require.Equal(t, uint64(1), st.Dropped)
		require.Zero(t, st.Acked)
		require.Len(t, tr.all(), 2, "nothing was published after the first Shutdown gave up")
		got, _ := r.all()
		var total uint64
		for _, g := range got {
			total += g.Failed
		}
		require.Equal(t, uint64(40), total)
	})
}

func TestAReplyThatIsNotOursIsIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tr := newFake(t, Config[int]{AckTimeout: time.Hour})
		require.True(t, s.Push(1))
		synctest.Wait()
		reply := tr.all()[0].reply
		for _, subject := range []string{
			"", "_INBOX.test", "_INBOX.test.", "_INBOX.other.1.0.1", "_INBOX.tes.1.0.1",
			"_INBOX.test.1.0", "_INBOX.test.1.0.1.2", "_INBOX.test.x.0.1", "_INBOX.test.1.99999.1",
			"_INBOX.test.2.0.1", // another value's sequence number
			"_INBOX.test.0.0.1", "_INBOX.test.99999999999999999999999.0.1",
		} {
			s.onAck(subject, "", []byte(okAck))
		}
		require.Equal(t, uint64(1), s.Stats().InFlight)
		s.onAck(reply, "", []byte(okAck))
		require.Equal(t, uint64(1), shutdown(t, s, 1).Acked)
	})
}

func TestAckResult(t *testing.T) {
	for _, tc := range []struct {
		status, body string
		dup          bool
		err          error
	}{
		{body: okAck},
		{body: `{"stream":"S","domain":"hub","seq":7}`},
		{body: dupAck, dup: true},
		{body: `{"seq":7,"stream":"S"}`}, // another field order
		{body: `{"seq":7,"stream":"S","duplicate":true}`, dup: true},
		{status: "503", err: jetstream.ErrNoStreamResponse},
		{status: "408", err: jetstream.ErrInvalidJSAck},
		{body: `not json`, err: jetstream.ErrInvalidJSAck},
		{body: `{"seq":7}`, err: jetstream.ErrInvalidJSAck},
	} {
		dup, err := ackResult(tc.status, []byte(tc.body))
		require.Equal(t, tc.dup, dup, "%q", tc.body)
		if tc.err == nil {
			require.NoError(t, err, "%q", tc.body)
		} else {
			require.ErrorIs(t, err, tc.err, "%q", tc.body)
		}
	}
	_, err := ackResult("", []byte(busyAck))
	apiErr, ok := errors.AsType[*jetstream.APIError](err)
	require.True(t, ok)
	require.Equal(t, 503, apiErr.Code)
	require.False(t, permanent(err))
	_, err = ackResult("", []byte(refusedAck))
	require.True(t, permanent(err))
	_, err = ackResult("", []byte(inProcessAck))
	require.False(t, permanent(err), "the first attempt may yet be stored")
}
