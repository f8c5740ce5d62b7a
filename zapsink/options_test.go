package zapsink

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/shardedsink/shardedsink/logsink"
)

// badOptions are options that zapsink passes on to logsink with values
// that logsink or its sink refuse, each with what zapsink's error must
// say of it after "zapsink: invalid options: ". SpillDir, where set, is
// replaced by a temporary directory.
var badOptions = []struct {
	opts Options
	want string
}{
	{Options{Buffering: logsink.Buffering{SpillDir: "-", SpillBytes: 1000}},
		"SpillBytes = 1000: must be at least sink.MinSpillShardBytes (65536) a shard: 131072 for 2 shards"},
	{Options{Buffering: logsink.Buffering{SpillDir: "-", Shards: 8, SpillBytes: 256 << 10}},
		"SpillBytes = 262144: must be at least sink.MinSpillShardBytes (65536) a shard: 524288 for 8 shards"},
	{Options{Buffering: logsink.Buffering{SpillBytes: -1}}, "SpillBytes = -1: must be positive"},
	{Options{Buffering: logsink.Buffering{SpillBytes: 1 << 20}}, "SpillBytes = 1048576: is set but SpillDir is not"},
	{Options{Buffering: logsink.Buffering{Shards: -1}}, "Shards = -1: must be positive"},
	{Options{Buffering: logsink.Buffering{Shards: 1025}}, "Shards = 1025: must be at most sink.MaxShards (1024)"},
	{Options{Buffering: logsink.Buffering{RingCapacity: -2}}, "RingCapacity = -2: must be positive"},
	{Options{Buffering: logsink.Buffering{RingCapacity: 1<<24 + 1}}, "RingCapacity = 16777217: must be at most sink.MaxRingCapacity (16777216)"},
	{Options{Buffering: logsink.Buffering{BatchSize: -3}}, "BatchSize = -3: must be positive"},
}

// requireOwnTerms checks that err is zapsink's, and names want and no
// field of logsink's or its sink's: every line of it is zapsink's own.
func requireOwnTerms(t *testing.T, err error, want ...string) {
	t.Helper()
	require.ErrorIs(t, err, ErrInvalidOptions)
	for _, w := range want {
		require.ErrorContains(t, err, "zapsink: invalid options: "+w)
	}
	for line := range strings.Lines(err.Error()) {
		rest, ok := strings.CutPrefix(line, "zapsink: invalid options: ")
		require.True(t, ok, "a line not zapsink's: %q", line)
		require.NotContains(t, rest, "logsink:")
		require.NotContains(t, rest, "sink: invalid config")
		require.NotContains(t, rest, "Spill.MaxBytes")
	}
}

// NewCore and NewWriteSyncer name every bad field they pass on to logsink
// in zapsink's terms: the field the user set, and its value, all in one
// error (before, each came back as logsink's or the sink's, "zapsink:
// invalid options: logsink: invalid options: sink: invalid config:
// Spill.MaxBytes = 1000: ...", and a nil destination as "w = nil").
func TestBadOptionsAreNamedInZapsinksTerms(t *testing.T) {
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	for _, c := range badOptions {
		o := c.opts
		if o.SpillDir != "" {
			o.SpillDir = t.TempDir()
		}
		core, err := NewCore(enc, io.Discard, zapcore.InfoLevel, &o)
		require.Nil(t, core)
		requireOwnTerms(t, err, c.want)
		ws, err := NewWriteSyncer(io.Discard, &o)
		require.Nil(t, ws)
		requireOwnTerms(t, err, c.want)
	}
	all := &Options{Buffering: logsink.Buffering{Shards: -1, RingCapacity: -2, BatchSize: -3, SpillBytes: -1}, SyncTimeout: -1}
	_, err := NewCore(enc, nil, zapcore.InfoLevel, all)
	requireOwnTerms(t, err, "dst = nil", "Shards = -1", "RingCapacity = -2", "BatchSize = -3", "SpillBytes = -1", "SyncTimeout = -1")
	_, err = NewWriteSyncer(nil, all)
	requireOwnTerms(t, err, "dst = nil", "Shards = -1", "RingCapacity = -2", "BatchSize = -3", "SpillBytes = -1", "SyncTimeout = -1")

	// The least SpillBytes is taken.
	core, err := NewCore(enc, io.Discard, zapcore.InfoLevel, &Options{Buffering: logsink.Buffering{SpillDir: t.TempDir(), Shards: 2, SpillBytes: 2 << 16}})
	require.NoError(t, err)
	require.NoError(t, core.Close(context.Background()))
}
