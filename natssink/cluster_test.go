package natssink_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/natssink/internal/crash"
	"github.com/shardedsink/shardedsink/natssink/internal/natsproc"
	"github.com/shardedsink/shardedsink/sink"
)

// natsServerBin is the nats-server binary the cluster test runs, built
// once per test binary (by the first test that needs it) into binDir,
// which TestMain removes.
var (
	binDir       string
	binOnce      sync.Once
	natsSrvBin   string
	natsSrvBuild error
)

func natsServerBin(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		natsSrvBin, natsSrvBuild = natsproc.Build(ctx, binDir)
	})
	require.NoError(t, natsSrvBuild)
	return natsSrvBin
}

// Three nats-server processes on loopback and an R3 file-stored stream; a
// sink with the default Config, connected to the node of the stream's
// leader, while producers push. The connection to that node loses what
// the node sends for 300 ms (the acks of values the stream stores), then
// the node is killed with SIGKILL: no shutdown, no hand-over of
// leadership, an election among the other two. It is restarted 2 s
// later. The sink must ride it out: nothing failed, nothing dropped, the
// stream holds every value pushed exactly once, some values were retried
// and some retries were recognised by the stream as values it had (a case
// runs again, up to leaderKilledAttempts times, until one does: only then
// has the stream's dedup been tested). It runs twice: one message per value, and through fast batches (the
// stream allows them, and FastBatchesAuto asks for them), whose unacked
// values are resent one message each with their ids.
func TestClusterLeaderKilledLosesAndDuplicatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds nats-server and runs three of them for about 20 s each")
	}
	for _, tc := range []struct {
		name    string
		batched bool
	}{
		{"one message per value", false},
		{"fast batches", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st natssink.Stats
			for attempt := 1; ; attempt++ {
				st = leaderKilled(t, tc.batched)
				if st.Duplicates > 0 || attempt == leaderKilledAttempts {
					break
				}
				// A run may even find no value in flight unacked at the
				// kill (0 retried, through fast batches in CI at
				// 877295f): the fault did not test the retry path either.
				// Through fast batches the values in flight when the acks
				// were lost are few (a batch waits for its flow acks),
				// and in some runs none of them had been stored before
				// the kill: no retry was a duplicate, and dedup went
				// untested (4 runs in 13 on the 2-core machine).
				t.Logf("attempt %d: no value whose ack was lost had been stored; again", attempt)
			}
			require.Positive(t, st.Retried, "the fault made the sink retry")
			require.Positive(t, st.Duplicates, "the stream recognised retries of values whose acks were lost")
			if tc.batched {
				require.Positive(t, st.Batched, "fast batches acked values")
			} else {
				require.Zero(t, st.Batched)
			}
		})
	}
}

// makeBinDir makes binDir and returns TestMain's cleanup of it.
func makeBinDir() func() {
	d, err := os.MkdirTemp("", "natssink-test-bin-")
	if err != nil {
		panic(err)
	}
	binDir = d
	return func() { _ = os.RemoveAll(d) }
}

// leaderKilledAttempts bounds the runs of a case of
// TestClusterLeaderKilledLosesAndDuplicatesNothing until one exercises
// the stream's dedup.
const leaderKilledAttempts = 5

// leaderKilled runs the crash of TestClusterLeaderKilledLosesAndDuplicatesNothing
// once, through fast batches when batched, checks that nothing was lost,
// dropped or stored twice, and returns the sink's Stats.
func leaderKilled(t *testing.T, batched bool) natssink.Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := crash.Run(ctx, crash.Options{
		Bin: natsServerBin(t), Dir: t.TempDir(),
		// A few thousand values a second is what three servers and the
		// client take on two cores under -race, with room for the retries.
		Producers: 4, Rate: 4000, For: 5 * time.Second,
		Kill: 1500 * time.Millisecond, Restart: 3500 * time.Millisecond, LoseAcks: 300 * time.Millisecond,
		AllowBatched: batched,
		Config: natssink.Config[crash.Value]{
			Sink: sink.Config[crash.Value]{Logger: quiet}, // the defaults
			// Off by default; here on, and used where allowed.
			FastBatches: natssink.FastBatchesAuto,
		},
		Logf: t.Logf,
	})
	require.NoError(t, err)
	t.Log(res)
	st := res.Stats
	require.NoError(t, res.Shutdown)
	require.Equal(t, res.Leader, res.Connected, "the sink was connected to the node killed")
	require.Equal(t, res.Pushed, st.Pushed)
	require.Zero(t, st.Failed, "nothing failed: %s", st.LastError)
	require.Zero(t, st.Dropped, "nothing dropped")
	require.Equal(t, st.Pushed, st.Acked, "every value acked")
	require.Equal(t, st.Acked, res.StreamMsgs, "the stream holds every acked value")
	require.Zero(t, res.StoredTwice, "none twice")
	require.Zero(t, res.Foreign, "and nothing else")
	return st
}
