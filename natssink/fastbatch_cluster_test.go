package natssink_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"github.com/synadia-io/orbit.go/jetstreamext"

	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/natssink/internal/crash"
	"github.com/shardedsink/shardedsink/natssink/internal/natsproc"
)

// A fast batch in flight when the stream's leader is killed (SIGKILL,
// three nats-server processes, an R3 file stream): the batch ends with an
// error (the publisher's wait for its next flow ack times out, or its
// Close fails), the messages up to the last flow ack are in the stream,
// and those after it may or may not be. Sending everything after the last flow ack again,
// in a new batch with the same Nats-Msg-Ids, leaves every value stored
// exactly once: what the Sink does (it resends a failed batch's unacked
// values, one message each, with their ids).
func TestAFastBatchThroughALeaderKillLosesNothingOnceResentByID(t *testing.T) {
	if testing.Short() {
		t.Skip("builds nats-server and runs three of them")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := natsproc.Start(natsServerBin(t), t.TempDir(), 3)
	require.NoError(t, err)
	defer c.Stop()
	quietErrs := nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {})
	admin, ajs, err := natssink.Connect(c.URLs(0), quietErrs)
	require.NoError(t, err)
	defer admin.Close()
	var st jetstream.Stream
	retry(t, ctx, "an R3 stream that allows fast batches", func() (err error) {
		actx, acancel := context.WithTimeout(ctx, 5*time.Second)
		defer acancel()
		st, err = ajs.CreateOrUpdateStream(actx, jetstream.StreamConfig{
			Name: "FASTCRASH", Subjects: []string{"fastcrash.>"}, Replicas: 3,
			Storage: jetstream.FileStorage, AllowBatchPublish: true,
		})
		return err
	})
	var leader string
	retry(t, ctx, "the stream's replicas current", func() error {
		actx, acancel := context.WithTimeout(ctx, 5*time.Second)
		defer acancel()
		var err error
		leader, err = crash.ReadyLeader(actx, st)
		return err
	})
	li := c.Index(leader)
	nc, js, err := natssink.Connect(c.URLs(li), nats.DontRandomize(), quietErrs)
	require.NoError(t, err)
	defer nc.Close()
	require.Equal(t, leader, nc.ConnectedServerName())

	// Up to 500 messages unacked: the kill lands with some in flight.
	fp, err := jetstreamext.NewFastPublisher(js, jetstreamext.FastPublishFlowControl{Flow: 10, MaxOutstandingAcks: 50, AckTimeout: 3 * time.Second})
	require.NoError(t, err)
	id := func(i int) string { return fmt.Sprintf("v-%d", i) }
	const killAt = 2000
	var acked uint64 // the highest flow ack: values 1..acked are stored
	sent, batchErr := 0, error(nil)
	killed := make(chan error, 1)
	for ; sent < 20000; sent++ {
		if sent == killAt { // while the publisher goes on: the kill lands mid-flight
			go func() { killed <- c.Kill(li) }()
		}
		ack, err := fp.AddMsg(msgWithID(t, "fastcrash.a", id(sent), 0, sent))
		if err != nil {
			batchErr = err
			break
		}
		acked = max(acked, ack.AckSequence)
	}
	if batchErr == nil {
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		_, batchErr = fp.Close(cctx)
		ccancel()
	}
	require.NoError(t, <-killed)
	t.Logf("killed %s after %d values; the batch ended at %d sent, flow-acked up to %d, with: %v", leader, killAt, sent, acked, batchErr)
	require.Error(t, batchErr, "a batch whose leader was killed does not commit")
	require.GreaterOrEqual(t, acked, uint64(1), "flow acks came before the kill")
	require.Less(t, acked, uint64(sent), "the kill left values unacked")

	// The values the flow acks covered are stored; resend the others, in
	// a new batch, with the same ids, as the Sink does.
	var have map[string]int
	retry(t, ctx, "the stream back with a leader", func() error {
		actx, acancel := context.WithTimeout(ctx, 5*time.Second)
		defer acancel()
		_, err := st.Info(actx)
		return err
	})
	for range 1 {
		have = msgIDs(t, st)
		for i := range int(acked) {
			require.Equal(t, 1, have[id(i)], "flow-acked %s", id(i))
		}
	}
	stored := len(have)
	retry(t, ctx, "the unacked values sent again in a new batch", func() error {
		fp, err := jetstreamext.NewFastPublisher(js, jetstreamext.FastPublishFlowControl{Flow: 10, AckTimeout: 3 * time.Second})
		if err != nil {
			return err
		}
		for i := int(acked); i < sent; i++ {
			if _, err := fp.AddMsg(msgWithID(t, "fastcrash.a", id(i), 0, i)); err != nil {
				return err
			}
		}
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		defer ccancel()
		_, err = fp.Close(cctx)
		if errors.Is(err, jetstreamext.ErrEmptyBatch) {
			return nil
		}
		return err
	})
	have = msgIDs(t, st)
	t.Logf("%d of the %d unacked values were stored before the resend; after it the stream holds %d", stored-int(acked), sent-int(acked), len(have))
	require.Len(t, have, sent, "every value sent is stored")
	for i := range sent {
		require.Equal(t, 1, have[id(i)], "%s stored once", id(i))
	}
}

// msgIDs counts the messages of st by Nats-Msg-Id.
func msgIDs(t testing.TB, st jetstream.Stream) map[string]int {
	t.Helper()
	out := make(map[string]int)
	for _, m := range readAll(t, st) {
		out[m.MsgID]++
	}
	return out
}
