package natssink_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"github.com/synadia-io/orbit.go/jetstreamext"

	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/sink"
)

// What JetStream's fast-ingest batches (allow_batched, nats-server 2.14+,
// orbit.go's jetstreamext.FastPublisher) promise, against the pinned
// server: the tests below state each finding that the Sink's fast
// batches rely on (Config.FastBatches).

// batchedStream creates a memory stream that allows fast batches.
func batchedStream(t testing.TB, js jetstream.JetStream, name string, subjects ...string) jetstream.Stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: name, Subjects: subjects, Storage: jetstream.MemoryStorage, AllowBatchPublish: true,
	})
	require.NoError(t, err)
	return st
}

// msgWithID is a message of the event (p, i) with the Nats-Msg-Id id.
func msgWithID(t testing.TB, subject, id string, p, i int) *nats.Msg {
	t.Helper()
	data, err := encodeEvent(nil, event{Producer: p, Seq: i})
	require.NoError(t, err)
	m := nats.NewMsg(subject)
	m.Data = data
	m.Header.Set("Nats-Msg-Id", id)
	return m
}

// streamMsgs returns how many messages the stream holds.
func streamMsgs(t testing.TB, st jetstream.Stream) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := st.Info(ctx)
	require.NoError(t, err)
	return info.State.Msgs
}

// A flow ack at batch sequence n (FastPubAck.AckSequence, "gap: fail",
// the default) means that the stream holds the batch's messages 1..n:
// each time it moves, the stream already holds at least that many; the
// commit's ack counts the whole batch.
func TestAFastBatchFlowAckMeansTheValuesUpToItAreStored(t *testing.T) {
	srv := embeddedServer(t)
	st := batchedStream(t, srv.JetStream, "FAST", "fast.>")
	fp, err := jetstreamext.NewFastPublisher(srv.JetStream, jetstreamext.FastPublishFlowControl{Flow: 10, AckTimeout: 5 * time.Second})
	require.NoError(t, err)
	const n = 1000
	moves := 0
	last := uint64(0)
	for i := range n {
		ack, err := fp.AddMsg(msgWithID(t, "fast.a", fmt.Sprintf("a-%d", i), 0, i))
		require.NoError(t, err)
		if ack.AckSequence > last {
			moves++
			last = ack.AckSequence
			require.GreaterOrEqual(t, streamMsgs(t, st), ack.AckSequence, "acked up to %d", ack.AckSequence)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bAck, err := fp.Close(ctx)
	require.NoError(t, err)
	require.Positive(t, moves, "flow acks came during the batch")
	require.Equal(t, uint64(n), bAck.BatchSize)
	require.Equal(t, uint64(n), streamMsgs(t, st))
}

// The stream recognises a Nats-Msg-Id across batches, and between a
// batch and a plain publish, within its duplicate window: a value sent
// again in a later batch (the retry of a batch that failed) is stored
// once, and the later batch still commits, counting every message it
// carried.
func TestAFastBatchStoresAValueSentAgainInALaterBatchOnce(t *testing.T) {
	srv := embeddedServer(t)
	st := batchedStream(t, srv.JetStream, "FAST", "fast.>")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	batch := func(from, to int) *jetstreamext.BatchAck {
		fp, err := jetstreamext.NewFastPublisher(srv.JetStream, jetstreamext.FastPublishFlowControl{Flow: 10})
		require.NoError(t, err)
		for i := from; i < to; i++ {
			_, err := fp.AddMsg(msgWithID(t, "fast.a", fmt.Sprintf("id-%d", i), 0, i))
			require.NoError(t, err)
		}
		ack, err := fp.Close(ctx)
		require.NoError(t, err)
		return ack
	}
	batch(0, 100)
	ack := batch(50, 150) // 50..99 again, then 50 new ones
	require.Equal(t, uint64(100), ack.BatchSize)
	_, err := srv.JetStream.PublishMsg(ctx, msgWithID(t, "fast.a", "id-120", 0, 120)) // a plain publish of one of them
	require.NoError(t, err)
	ack = batch(140, 160) // 140..149 again, 10 new ones
	require.Equal(t, uint64(20), ack.BatchSize)

	got := readAll(t, st)
	require.Len(t, got, 160)
	seen := make(map[string]int)
	for _, m := range got {
		seen[m.MsgID]++
	}
	for i := range 160 {
		require.Equal(t, 1, seen[fmt.Sprintf("id-%d", i)], "id-%d", i)
	}
}

// A stream without allow_batched refuses the batch's first message, and
// so the batch: nothing is stored.
func TestAStreamWithoutAllowBatchedRefusesAFastBatch(t *testing.T) {
	srv := embeddedServer(t)
	st := stream(t, srv.JetStream, "PLAIN", "plain.>")
	fp, err := jetstreamext.NewFastPublisher(srv.JetStream)
	require.NoError(t, err)
	_, err = fp.AddMsg(msgWithID(t, "plain.a", "x", 0, 0))
	require.ErrorIs(t, err, jetstreamext.ErrFastBatchNotEnabled)
	require.Zero(t, streamMsgs(t, st))
}

// A Sink publishes through fast batches where the stream allows them and
// FastBatchesAuto asks for them, and one message per value otherwise (a
// stream without allow_batched, or FastBatchesOff, the default): either
// way every value is stored once, with its own Nats-Msg-Id.
func TestASinkUsesFastBatchesWhereTheStreamAllowsThem(t *testing.T) {
	for _, tc := range []struct {
		name        string
		allow       bool
		choice      natssink.FastBatches
		wantBatched bool
	}{
		{"allow_batched, FastBatchesAuto", true, natssink.FastBatchesAuto, true},
		{"allow_batched, FastBatchesOff (the default)", true, natssink.FastBatchesOff, false},
		{"no allow_batched, FastBatchesAuto", false, natssink.FastBatchesAuto, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := embeddedServer(t)
			var st jetstream.Stream
			if tc.allow {
				st = batchedStream(t, srv.JetStream, "EVENTS", "events.>")
			} else {
				st = stream(t, srv.JetStream, "EVENTS", "events.>")
			}
			s, err := natssink.New(srv.JetStream, natssink.Config[event]{
				Subject: "events.test", Encode: encodeEvent, FastBatches: tc.choice,
				Sink: sink.Config[event]{RingCapacity: 1 << 14},
			})
			require.NoError(t, err)
			const producers, each = 8, 1000
			var wg sync.WaitGroup
			for p := range producers {
				wg.Go(func() {
					for i := range each {
						require.True(t, s.Push(event{Producer: p, Seq: i}))
					}
				})
			}
			wg.Wait()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			require.NoError(t, s.Shutdown(ctx))
			stats := s.Stats()
			requireIdentity(t, stats, producers*each)
			require.Equal(t, uint64(producers*each), stats.Acked)
			if tc.wantBatched {
				require.Equal(t, stats.Acked, stats.Batched, "every value acked by a batch")
			} else {
				require.Zero(t, stats.Batched)
			}
			msgs := readAll(t, st)
			require.Len(t, msgs, producers*each)
			ids, seen := map[string]bool{}, map[event]bool{}
			for _, m := range msgs {
				require.NotEmpty(t, m.MsgID)
				require.False(t, ids[m.MsgID], "Nats-Msg-Id %s twice", m.MsgID)
				require.False(t, seen[m.Event], "%+v twice", m.Event)
				ids[m.MsgID], seen[m.Event] = true, true
			}
		})
	}
}

// A runtime.Goexit in Encode ends the worker's batch before it is
// published: the values prepared before it go out one message each (the
// retry path), that value and those after it fail, nothing is left
// uncounted.
func TestAGoexitInEncodeBeforeAFastBatchLosesNothing(t *testing.T) {
	srv := embeddedServer(t)
	st := batchedStream(t, srv.JetStream, "EVENTS", "events.>")
	s, err := natssink.New(srv.JetStream, natssink.Config[event]{
		Subject: "events.test", FastBatches: natssink.FastBatchesAuto,
		Encode: func(dst []byte, e event) ([]byte, error) {
			if e.Seq == 3 {
				runtime.Goexit()
			}
			return encodeEvent(dst, e)
		},
		Sink: sink.Config[event]{Shards: 1, BatchSize: 16, MaxDelay: 200 * time.Millisecond, Logger: quiet},
	})
	require.NoError(t, err)
	for i := range 8 {
		require.True(t, s.Push(event{Seq: i}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
	stats := s.Stats()
	requireIdentity(t, stats, 8)
	require.Equal(t, uint64(3), stats.Acked, "0, 1, 2")
	require.Zero(t, stats.Batched, "published one message each")
	require.Equal(t, uint64(5), stats.Failed, "3 and what followed it in its batch")
	require.Len(t, readAll(t, st), 3)
}
