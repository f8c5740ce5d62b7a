package logsink_test

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/logsink"
)

// A SpillBytes below 64 KiB a shard is named as SpillBytes, logsink's
// field, by Check and by New, with the minimum for the shard count: not
// as the sink's Spill.MaxBytes (before, Check passed it and New's error
// was "logsink: invalid options: sink: invalid config: Spill.MaxBytes =
// 1000: ..."). The minimum itself is taken.
func TestASpillBytesBelowTheMinimumIsNamedAsSpillBytes(t *testing.T) {
	for _, c := range []struct {
		opts logsink.Options
		want string
	}{
		{logsink.Options{Buffering: logsink.Buffering{SpillBytes: 1000}},
			"logsink: invalid options: SpillBytes = 1000: must be at least sink.MinSpillShardBytes (65536) a shard: 131072 for 2 shards"},
		{logsink.Options{Buffering: logsink.Buffering{Shards: 4, SpillBytes: 4<<16 - 1}},
			"logsink: invalid options: SpillBytes = 262143: must be at least sink.MinSpillShardBytes (65536) a shard: 262144 for 4 shards"},
	} {
		o := c.opts
		o.SpillDir = t.TempDir()
		require.ErrorIs(t, o.Check(io.Discard), logsink.ErrInvalidOptions, "Check(%+v)", c.opts)
		require.EqualError(t, o.Check(io.Discard), c.want)
		w, err := logsink.New(io.Discard, &o)
		require.Nil(t, w)
		require.ErrorIs(t, err, logsink.ErrInvalidOptions)
		require.EqualError(t, err, c.want)
	}
	w, err := logsink.New(io.Discard, &logsink.Options{Buffering: logsink.Buffering{Shards: 4, SpillBytes: 4 << 16, SpillDir: t.TempDir()}})
	require.NoError(t, err, "the minimum")
	require.NoError(t, w.Close(context.Background()))
}
