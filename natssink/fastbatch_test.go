package natssink_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"github.com/synadia-io/orbit.go/jetstreamext"
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
