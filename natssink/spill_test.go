package natssink_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
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
	msgs := readAll(t, st)
	twice := 0
	for _, m := range msgs {
		if seen[m.Event] {
			twice++
		}
		seen[m.Event] = true
	}
	require.Zero(t, twice, "values stored twice, of %d messages", len(msgs))
	for _, m := range msgs {
		require.Equal(t, eventID(m.Event), m.MsgID, "the message's id is the caller's")
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
	t.Logf("spilled %d, spill-drained %d, retried %d", stats.Rings.Spilled, stats.Rings.SpillDrained, stats.Retried)
	requireIdentity(t, stats, producers*each)
	require.Equal(t, uint64(producers*each), stats.Acked, "%+v", stats)
	require.Zero(t, stats.Dropped)
	require.Zero(t, stats.Failed)
	require.Equal(t, stats.Rings.Spilled, stats.Rings.SpillDrained, "every spilled value came back")
	require.Len(t, requireStoredOnce(t, st), producers*each)
}

// The crash test's figures: the values the child pushes through the
// outage, and how many of them the stream holds when the child is killed
// mid-replay.
const (
	crashValues = 20000
	crashKillAt = 1000
)

// TestSpillCrashChild is the child process of
// TestASpillDirectoryOutlivesASIGKILLAndIsStoredOnce: a sink on
// NATSSINK_SPILL_DIR, connected to NATSSINK_SPILL_URL while no stream
// captures its subject, into which 8 producers push crashValues values.
// It then waits for three sync intervals, prints "synced SPILLED", and
// waits to be killed (at most a minute).
func TestSpillCrashChild(t *testing.T) {
	dir, url := os.Getenv("NATSSINK_SPILL_DIR"), os.Getenv("NATSSINK_SPILL_URL")
	if dir == "" {
		t.Skip("the child process of the spill crash test")
	}
	fail := func(what string, err any) {
		fmt.Println(what, err)
		os.Exit(1)
	}
	_, js, err := natssink.Connect(url)
	if err != nil {
		fail("connect:", err)
	}
	cfg := crashConfig(dir)
	cfg.SkipStreamCheck = true // no stream captures the subject yet
	s, err := natssink.New(js, cfg)
	if err != nil {
		fail("new:", err)
	}
	const producers = 8
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range crashValues / producers {
				if !s.Push(event{Producer: p, Seq: i}) {
					fail("dropped:", s.Stats())
				}
			}
		})
	}
	wg.Wait()
	time.Sleep(3 * cfg.Sink.Spill.SyncInterval)
	fmt.Println("synced", s.Stats().Rings.Spilled)
	time.Sleep(time.Minute)
	fail("not killed:", s.Stats())
}

// crashConfig is the sink of the crash test, in the child and after it.
func crashConfig(dir string) natssink.Config[event] {
	cfg := spillConfig(dir)
	cfg.Sink.Spill.SyncInterval = 500 * time.Millisecond
	return cfg
}

// A producer process killed with SIGKILL after an outage spilled its
// values, while it publishes them from disk, and a sink started on the
// same directory: the stream holds at least as many values as were
// spilled and synced before the kill, none twice, though the dead process
// had published some of those the new one publishes again (read back
// since the last sync; acked as Duplicates): their ids, the caller's
// (MsgIDOf), are the same. The values lost are those still in the rings.
func TestASpillDirectoryOutlivesASIGKILLAndIsStoredOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process and waits for its outage")
	}
	srv := embeddedServer(t)
	st := stream(t, srv.JetStream, "SPILLCRASH", "spill.x")
	setSubjects(t, srv.JetStream, st, "parked.x")
	dir := t.TempDir()

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSpillCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "NATSSINK_SPILL_DIR="+dir, "NATSSINK_SPILL_URL="+srv.URL)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	lines := bufio.NewScanner(out)
	var spilled int
	for lines.Scan() {
		if _, err := fmt.Sscanf(lines.Text(), "synced %d", &spilled); err == nil {
			break
		}
		t.Log("child:", lines.Text())
	}
	require.Positive(t, spilled, "the child's outage spilled")

	// The stream answers: the child publishes from disk, and is killed
	// once the stream holds crashKillAt of its values.
	setSubjects(t, srv.JetStream, st, "spill.x")
	var atKill uint64
	retry(t, ctx, "the child's first values stored", func() error {
		info, err := st.Info(ctx)
		if err != nil {
			return err
		}
		if atKill = info.State.Msgs; atKill < crashKillAt {
			return fmt.Errorf("%d stored", atKill)
		}
		return nil
	})
	require.NoError(t, cmd.Process.Kill())
	killed = true
	_ = cmd.Wait()
	require.Less(t, atKill, uint64(crashValues), "killed mid-replay")

	s, err := natssink.New(srv.JetStream, crashConfig(dir))
	require.NoError(t, err)
	require.NoError(t, s.Shutdown(ctx))
	stats := s.Stats()
	stored := requireStoredOnce(t, st)
	t.Logf("child: %d spilled and synced, %d stored at the kill; after: recovered %d, acked %d (%d duplicates), stored %d of %d",
		spilled, atKill, stats.Recovered, stats.Acked, stats.Duplicates, len(stored), crashValues)
	require.Zero(t, stats.Failed, "%+v", stats)
	require.Zero(t, stats.Pushed)
	require.Equal(t, stats.Recovered, stats.Acked, "%+v", stats)
	require.Positive(t, stats.Recovered, "the new sink published what the dead one left")
	require.Positive(t, stats.Duplicates, "values the dead sink published after the last sync were published again, and recognised")
	require.GreaterOrEqual(t, len(stored), spilled, "every value spilled and synced is stored")
}

// A Shutdown whose ctx ends during an outage gives up on the values in
// flight (Failed) and leaves those on disk, with what the rings held, to
// the next sink on the directory: they stay in Queued, through a later
// Shutdown too, and the next sink publishes them (Recovered), each once.
func TestAShutdownWhoseCtxEndsLeavesTheDiskToTheNextSink(t *testing.T) {
	srv := embeddedServer(t)
	st := stream(t, srv.JetStream, "SPILL", "spill.x")
	dir := t.TempDir()
	s, err := natssink.New(srv.JetStream, spillConfig(dir))
	require.NoError(t, err)
	setSubjects(t, srv.JetStream, st, "parked.x")
	const n = 5000
	for i := range n {
		require.True(t, s.Push(event{Seq: i}))
	}
	time.Sleep(300 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, s.Shutdown(ctx), context.DeadlineExceeded)
	require.NoError(t, s.Shutdown(context.Background()))
	left := s.Stats()
	require.Equal(t, uint64(n), left.Pushed, "%+v", left)
	require.Equal(t, uint64(left.Rings.SpillQueued), left.Queued, "what is left is on disk: %+v", left)
	require.Positive(t, left.Queued)
	require.Equal(t, left.Pushed, left.Queued+left.Failed, "%+v", left)

	setSubjects(t, srv.JetStream, st, "spill.x")
	next, err := natssink.New(srv.JetStream, spillConfig(dir))
	require.NoError(t, err)
	require.NoError(t, next.Shutdown(t.Context()))
	got := next.Stats()
	require.Equal(t, left.Queued, got.Recovered, "%+v", got)
	require.Equal(t, got.Recovered, got.Acked, "%+v", got)
	require.Len(t, requireStoredOnce(t, st), int(got.Acked))
}
