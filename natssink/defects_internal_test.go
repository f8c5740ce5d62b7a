package natssink

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/sink"
)

// The tests of issue 35's review findings, each named by what holds now.

// A stream or a domain named "duplicate" is no duplicate ack (defect 8).
func TestAStreamOrDomainNamedDuplicateIsNoDuplicateAck(t *testing.T) {
	for _, body := range []string{
		`{"stream":"duplicate","seq":1}`,
		`{"stream":"S","domain":"duplicate","seq":1}`,
		`{"stream":"S","domain":"x\"duplicate\"","seq":1}`,
		`{"stream":"S","seq":1,"duplicate":false}`,
	} {
		dup, err := ackResult("", []byte(body))
		require.NoError(t, err, body)
		require.False(t, dup, body)
	}
	dup, err := ackResult("", []byte(`{"stream":"duplicate","seq":1,"duplicate":true}`))
	require.NoError(t, err)
	require.True(t, dup)
}

// An Encode that returns a nil slice publishes an empty payload, not the
// slot's previous value (defect 3).
func TestAnEncodeThatReturnsNilPublishesAnEmptyPayload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tr := newFake(t, Config[int]{MaxInFlight: 1, Encode: func(dst []byte, v int) ([]byte, error) {
			if v == 0 {
				return nil, nil
			}
			return encodeInt(dst, v)
		}})
		tr.setAnswer(ackAll)
		require.True(t, s.Push(12345))
		require.NoError(t, s.Flush(t.Context()))
		require.True(t, s.Push(0))
		require.NoError(t, s.Flush(t.Context()))
		pubs := tr.all()
		require.Len(t, pubs, 2)
		require.Equal(t, "12345", pubs[0].payload)
		require.Empty(t, pubs[1].payload, "not another value's bytes")
		shutdown(t, s, 2)
	})
}

// A subject from SubjectOf that one cannot publish to fails the value,
// counted and not published (defect 4).
func TestABadSubjectFromSubjectOfFailsTheValueUnpublished(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		subjects := []string{"events.*", "events.>", "events..x", "", "a b", "ok.one"}
		s, tr := newFake(t, Config[int]{SubjectOf: func(v int) string { return subjects[v] }})
		tr.setAnswer(ackAll)
		for i := range subjects {
			require.True(t, s.Push(i))
		}
		st := shutdown(t, s, len(subjects))
		require.Equal(t, uint64(1), st.Acked)
		require.Equal(t, uint64(len(subjects)-1), st.Failed)
		require.Zero(t, st.Retried)
		pubs := tr.all()
		require.Len(t, pubs, 1)
		require.Equal(t, "ok.one", pubs[0].subject)
		require.ErrorIs(t, s.reporter.lastError(), nats.ErrBadSubject)
	})
}

// A runtime.Goexit in Encode (a test helper's require inside it) frees
// the slot and counts its value and the rest of its batch as failed;
// Shutdown returns nil (defect 5).
func TestAGoexitInEncodeLosesNothingUncounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tr := newFake(t, Config[int]{Encode: func(dst []byte, v int) ([]byte, error) {
			if v == 3 {
				runtime.Goexit()
			}
			return encodeInt(dst, v)
		},
			Sink: sink.Config[int]{BatchSize: 16, MaxDelay: time.Second},
		})
		tr.setAnswer(ackAll)
		for i := range 8 {
			require.True(t, s.Push(i))
		}
		synctest.Wait()
		st := shutdown(t, s, 8)
		require.Equal(t, uint64(3), st.Acked, "0, 1, 2")
		require.Equal(t, uint64(5), st.Failed, "3 and what followed it in its batch")
		require.Zero(t, st.InFlight)
		require.ErrorIs(t, s.reporter.lastError(), ErrEncodePanicked)
	})
}

// An OnError that blocks delays no retry, and Shutdown returns within its
// ctx (defect 1).
func TestAnOnErrorThatBlocksStopsNoRetryNorShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		block := make(chan struct{})
		defer close(block)
		s, tr := newFake(t, Config[int]{
			AckTimeout: time.Second, Attempts: 3, RetryBudget: time.Minute,
			OnError: func(error) { <-block },
		})
		require.True(t, s.Push(1)) // never acked: fails after 3 attempts, OnError blocks
		synctest.Wait()
		time.Sleep(3500 * time.Millisecond)
		synctest.Wait()
		require.Equal(t, uint64(1), s.Stats().Failed)
		require.True(t, s.Push(2)) // retried while OnError blocks
		time.Sleep(2500 * time.Millisecond)
		synctest.Wait()
		require.Len(t, tr.all(), 6, "the second value's retries happen while OnError blocks")
		tr.setAnswer(ackAll)
		time.Sleep(2 * time.Second)
		synctest.Wait()

		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := s.Shutdown(ctx)
		require.LessOrEqual(t, time.Since(start), 300*time.Millisecond, "within its ctx + 100 ms")
		require.ErrorIs(t, err, context.DeadlineExceeded, "the last report is not delivered: OnError blocks")
		st := s.Stats()
		require.Equal(t, st.Pushed, st.Acked+st.Failed+st.Dropped)
	})
}

// A publish that blocks in the client does not make Shutdown overrun its
// ctx (defect 7): its value is settled when the publish returns.
func TestAPublishThatBlocksDoesNotHoldShutdownPastItsCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		block := make(chan struct{})
		s, tr := newFake(t, Config[int]{Sink: sink.Config[int]{Shards: 2}})
		tr.fail = func(p published) error {
			if p.payload == "1" {
				<-block
			}
			return nil
		}
		tr.answer = ackAll
		for i := range 4 {
			require.True(t, s.Push(i))
		}
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := s.Shutdown(ctx)
		require.LessOrEqual(t, time.Since(start), 300*time.Millisecond, "within its ctx + 100 ms")
		require.ErrorIs(t, err, context.DeadlineExceeded)
		close(block)
		synctest.Wait()
		st := s.Stats()
		require.Zero(t, st.InFlight, "the blocked publish's value is settled once it returns")
		require.Equal(t, st.Pushed, st.Acked+st.Failed+st.Dropped+st.Queued)
	})
}

// One large value does not pin its size in its slot (defect 12).
func TestASlotDoesNotKeepALargeBuffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tr := newFake(t, Config[int]{MaxInFlight: 1, Encode: func(dst []byte, v int) ([]byte, error) {
			return append(dst, strings.Repeat("x", v)...), nil
		}})
		tr.setAnswer(ackAll)
		require.True(t, s.Push(1<<20))
		require.NoError(t, s.Flush(t.Context()))
		require.LessOrEqual(t, bufCap(s.slots.get(0)), keepBuffer)
		require.True(t, s.Push(100))
		require.NoError(t, s.Flush(t.Context()))
		require.Less(t, bufCap(s.slots.get(0)), 1<<20)
		shutdown(t, s, 2)
	})
}

// The API's slips (defect 13).
func TestFlushAfterShutdownIsErrShutdownOfBoth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := newFake(t, Config[int]{})
		shutdown(t, s, 0)
		err := s.Flush(t.Context())
		require.ErrorIs(t, err, ErrShutdown)
		require.ErrorIs(t, err, sink.ErrShutdown)
	})
}

func TestErrAckTimeoutIsANatsTimeout(t *testing.T) {
	require.ErrorIs(t, ErrAckTimeout, nats.ErrTimeout)
}

func TestAFailedUnsubscribeIsNoShutdownError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := newFake(t, Config[int]{})
		s.unsub = func() error { return errors.New("unsubscribe failed") }
		require.NoError(t, s.Shutdown(t.Context()), "every value is settled")
	})
}

func bufCap(sl *slot) int {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	return cap(sl.payload)
}

// A stream that has too many requests pending (429, as after an election
// under load) is retried, not given up: the crash probe found it.
func TestTooManyRequestsIsRetried(t *testing.T) {
	_, err := ackResult("", []byte(`{"error":{"code":429,"err_code":10167,"description":"too many requests"},"stream":"S","seq":0}`))
	require.Error(t, err)
	require.False(t, permanent(err))
}

// SizeOf and MaxQueuedBytes reach the rings: a value beyond the rings'
// byte budget is dropped and counted.
func TestMaxQueuedBytesBoundsTheRings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, tr := newFake(t, Config[int]{MaxInFlight: 1, AckTimeout: time.Hour, Sink: sink.Config[int]{SizeOf: func(v int) int { return v }, MaxQueuedBytes: 1000}})
		require.True(t, s.Push(10)) // in flight, never acked
		synctest.Wait()
		require.True(t, s.Push(600))
		require.False(t, s.Push(600), "1,200 bytes queued would pass 1,000")
		st := s.Stats()
		require.Equal(t, uint64(1), st.Rings.DroppedForBytes)
		tr.setAnswer(ackAll)
		s.onAck(tr.all()[0].reply, "", []byte(okAck))
		shutdown(t, s, 3)
	})
}
