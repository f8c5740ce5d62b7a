package natssink_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/sink"
)

// eventCodec is the spill tier's Codec of events: a record is the
// event's payload, which decodeEvent reads back.
type eventCodec struct{}

func (eventCodec) Append(dst []byte, e event) ([]byte, error) { return encodeEvent(dst, e) }
func (eventCodec) Decode(p []byte) (event, error)             { return decodeEvent(p) }

// eventID is the caller's id of an event: its producer and sequence
// number, the same in every process.
func eventID(e event) string {
	return strconv.Itoa(e.Producer) + "-" + strconv.Itoa(e.Seq)
}

// spillConfig is the sink of the spill tests: MaxInFlight and the rings
// far smaller than the values an outage brings, so that most of them go
// to disk.
func spillConfig(dir string) natssink.Config[event] {
	return natssink.Config[event]{
		Subject: "spill.x", Encode: encodeEvent, MsgIDOf: eventID,
		MaxInFlight: 64, RetryBackoff: 20 * time.Millisecond,
		Sink: sink.Config[event]{
			Shards: 2, RingCapacity: 256, BatchSize: 32,
			Spill: sink.Spill[event]{Dir: dir, MaxBytes: 64 << 20, Codec: eventCodec{}, SyncInterval: 100 * time.Millisecond},
		},
	}
}

// setSubjects points the stream at subjects: a stream that no longer
// captures spill.x is an outage for the sink (no stream answers its
// publishes), and its duplicate window outlives it.
func setSubjects(t testing.TB, js jetstream.JetStream, st jetstream.Stream, subjects ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg := st.CachedInfo().Config
	cfg.Subjects = subjects
	_, err := js.UpdateStream(ctx, cfg)
	require.NoError(t, err)
}

// requireStoredOnce reads the stream and requires each event in it once,
// with its own id, and returns the events.
func requireStoredOnce(t *testing.T, st jetstream.Stream) map[event]bool {
	t.Helper()
	seen := map[event]bool{}
	for _, m := range readAll(t, st) {
		require.False(t, seen[m.Event], "%+v stored twice", m.Event)
		seen[m.Event] = true
		require.Equal(t, eventID(m.Event), m.MsgID)
	}
	return seen
}

// New refuses a spill directory without MsgIDOf: the sink's own ids are
// drawn anew by each process, so a value read back after a restart would
// be stored again.
func TestNewRefusesASpillDirectoryWithoutMsgIDOf(t *testing.T) {
	srv := embeddedServer(t)
	cfg := spillConfig(t.TempDir())
	cfg.MsgIDOf = nil
	_, err := natssink.New(srv.JetStream, cfg)
	require.ErrorIs(t, err, natssink.ErrInvalidConfig)
	require.ErrorContains(t, err, "Sink.Spill.Dir")
	require.ErrorContains(t, err, "needs MsgIDOf")
}

// An outage far longer than MaxInFlight (64) and the rings (2 x 256)
// hold: the stream answers nothing while 8 producers push 20,000 values
// and for a second after. The values the slots and rings cannot hold go
// to disk; none is dropped or failed, and once the stream is back every
// one is stored once, with its id.
func TestAnOutageLongerThanTheRingsHoldIsSpilledAndStoredOnce(t *testing.T) {
	srv := embeddedServer(t)
	st := stream(t, srv.JetStream, "SPILL", "spill.x")
	s, err := natssink.New(srv.JetStream, spillConfig(t.TempDir()))
	require.NoError(t, err)
	setSubjects(t, srv.JetStream, st, "parked.x")

	const producers, each = 8, 2500
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				require.True(t, s.Push(event{Producer: p, Seq: i}), "the tier takes what the rings cannot")
			}
		})
	}
	wg.Wait()
	time.Sleep(time.Second)
	during := s.Stats()
	require.Zero(t, during.Acked, "the stream did not answer: %+v", during)
	require.Greater(t, during.Rings.Spilled, uint64(producers*each/2), "%+v", during)
	require.Equal(t, uint64(producers*each), during.Pushed, "the values on disk are in Pushed and Queued: %+v", during)

	setSubjects(t, srv.JetStream, st, "spill.x")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
	stats := s.Stats()
	t.Logf("spilled %d, replayed %d, retried %d", stats.Rings.Spilled, stats.Rings.Replayed, stats.Retried)
	requireIdentity(t, stats, producers*each)
	require.Equal(t, uint64(producers*each), stats.Acked, "%+v", stats)
	require.Zero(t, stats.Dropped)
	require.Zero(t, stats.Failed)
	require.Equal(t, stats.Rings.Spilled, stats.Rings.Replayed, "every spilled value came back")
	require.Len(t, requireStoredOnce(t, st), producers*each)
}
