package zerologsink_test

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/zerologsink"
)

// requireOwnTerms checks that err is zerologsink's, and names want and no
// field of logsink's or its sink's: every line of it is zerologsink's own.
func requireOwnTerms(t *testing.T, err error, want ...string) {
	t.Helper()
	require.ErrorIs(t, err, zerologsink.ErrInvalidOptions)
	for _, w := range want {
		require.ErrorContains(t, err, "zerologsink: invalid options: "+w)
	}
	for line := range strings.Lines(err.Error()) {
		rest, ok := strings.CutPrefix(line, "zerologsink: invalid options: ")
		require.True(t, ok, "a line not zerologsink's: %q", line)
		require.NotContains(t, rest, "logsink:")
		require.NotContains(t, rest, "sink: invalid config")
		require.NotContains(t, rest, "Spill.MaxBytes")
	}
}

// New names every bad field it passes on to logsink in zerologsink's
// terms: the field the user set, and its value, all in one error (before,
// each came back as logsink's or the sink's, "zerologsink: invalid
// options: logsink: invalid options: sink: invalid config: Spill.MaxBytes
// = 1000: ...", and a nil destination as "w = nil").
func TestBadOptionsAreNamedInZerologsinksTerms(t *testing.T) {
	for _, c := range []struct {
		opts zerologsink.Options
		want string
	}{
		{zerologsink.Options{Buffering: logsink.Buffering{SpillDir: "-", SpillBytes: 1000}},
			"SpillBytes = 1000: must be at least sink.MinSpillShardBytes (65536) a shard: 131072 for 2 shards"},
		{zerologsink.Options{Buffering: logsink.Buffering{SpillDir: "-", Shards: 8, SpillBytes: 256 << 10}},
			"SpillBytes = 262144: must be at least sink.MinSpillShardBytes (65536) a shard: 524288 for 8 shards"},
		{zerologsink.Options{Buffering: logsink.Buffering{SpillBytes: -1}}, "SpillBytes = -1: must be positive"},
		{zerologsink.Options{Buffering: logsink.Buffering{SpillBytes: 1 << 20}}, "SpillBytes = 1048576: is set but SpillDir is not"},
		{zerologsink.Options{Buffering: logsink.Buffering{Shards: -1}}, "Shards = -1: must be positive"},
		{zerologsink.Options{Buffering: logsink.Buffering{Shards: 1025}}, "Shards = 1025: must be at most sink.MaxShards (1024)"},
		{zerologsink.Options{Buffering: logsink.Buffering{RingCapacity: -2}}, "RingCapacity = -2: must be positive"},
		{zerologsink.Options{Buffering: logsink.Buffering{RingCapacity: 1<<24 + 1}}, "RingCapacity = 16777217: must be at most sink.MaxRingCapacity (16777216)"},
		{zerologsink.Options{Buffering: logsink.Buffering{BatchSize: -3}}, "BatchSize = -3: must be positive"},
	} {
		o := c.opts
		if o.SpillDir != "" {
			o.SpillDir = t.TempDir()
		}
		w, err := zerologsink.New(io.Discard, &o)
		require.Nil(t, w)
		requireOwnTerms(t, err, c.want)
	}
	_, err := zerologsink.New(nil, &zerologsink.Options{Buffering: logsink.Buffering{Shards: -1, RingCapacity: -2, BatchSize: -3, SpillBytes: -1}, CloseTimeout: -1})
	requireOwnTerms(t, err, "dst = nil", "Shards = -1", "RingCapacity = -2", "BatchSize = -3", "SpillBytes = -1", "CloseTimeout = -1")

	// The least SpillBytes is taken.
	w, err := zerologsink.New(io.Discard, &zerologsink.Options{Buffering: logsink.Buffering{SpillDir: t.TempDir(), Shards: 2, SpillBytes: 2 << 16}})
	require.NoError(t, err)
	require.NoError(t, w.Close())
}
