package natssink_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/natssink"
	"github.com/shardedsink/shardedsink/sink"
)

func TestNewNamesEveryBadFieldAndItsValue(t *testing.T) {
	srv := embeddedServer(t)
	for _, tc := range []struct {
		name string
		cfg  natssink.Config[event]
		want []string
	}{
		{
			name: "nothing set",
			want: []string{`Subject = "": required unless SubjectOf is set`, "Encode = nil"},
		},
		{
			name: "both subjects",
			cfg:  natssink.Config[event]{Subject: "a", SubjectOf: func(event) string { return "b" }, Encode: encodeEvent},
			want: []string{`Subject = "a": set Subject or SubjectOf, not both`},
		},
		{
			name: "a subject with a wildcard",
			cfg:  natssink.Config[event]{Subject: "events.*", Encode: encodeEvent},
			want: []string{`Subject = "events.*"`},
		},
		{
			name: "a subject with an empty token",
			cfg:  natssink.Config[event]{Subject: "events..x", Encode: encodeEvent},
			want: []string{`Subject = "events..x"`},
		},
		{
			// Item 9 of issue 44: before, New sent these names to the
			// server and answered with an error that wrapped neither
			// ErrInvalidConfig nor ErrStreamUnsuitable.
			name: "stream names the server would refuse",
			cfg:  natssink.Config[event]{Subject: "e", Stream: "H6.DOT", Encode: encodeEvent},
			want: []string{`Stream = "H6.DOT": not a stream name`},
		},
		{
			name: "a stream name with a space",
			cfg:  natssink.Config[event]{Subject: "e", Stream: "H6 SPACE", Encode: encodeEvent, SkipStreamCheck: true},
			want: []string{`Stream = "H6 SPACE": not a stream name`},
		},
		{
			name: "a stream name with a wildcard",
			cfg:  natssink.Config[event]{Subject: "e", Stream: "H6*", Encode: encodeEvent},
			want: []string{`Stream = "H6*": not a stream name`},
		},
		{
			name: "negative sizes and durations",
			cfg: natssink.Config[event]{
				Subject: "e", Encode: encodeEvent, MaxInFlight: -1, AckTimeout: -time.Second,
				Attempts: -2, RetryBudget: -time.Minute, RetryBackoff: -time.Millisecond,
			},
			want: []string{"MaxInFlight = -1", "AckTimeout = -1s", "Attempts = -2", "RetryBudget = -1m0s", "RetryBackoff = -1ms"},
		},
		{
			name: "a FastBatches that is no choice",
			cfg:  natssink.Config[event]{Subject: "e", Encode: encodeEvent, FastBatches: 7},
			want: []string{"FastBatches = FastBatches(7): must be FastBatchesOff (0) or FastBatchesAuto (1)"},
		},
		{
			name: "too many in flight",
			cfg:  natssink.Config[event]{Subject: "e", Encode: encodeEvent, MaxInFlight: natssink.MaxMaxInFlight + 1},
			want: []string{"MaxInFlight = 4194305: must be in [1, 4194304]"},
		},
		{
			// Each would overflow a deadline (now + AckTimeout) or the
			// doubling backoff on the retry goroutine.
			name: "durations that overflow",
			cfg: natssink.Config[event]{
				Subject: "e", Encode: encodeEvent, MaxInFlightBytes: -1,
				AckTimeout: time.Duration(1<<63 - 1), RetryBudget: natssink.MaxDuration + 1, RetryBackoff: time.Duration(1 << 62),
			},
			want: []string{"MaxInFlightBytes = -1", "AckTimeout = 2562047h47m16.854775807s: must be in (0, 24h]",
				"RetryBudget = 24h0m0.000000001s", "RetryBackoff = 1281023h53m38.427387904s"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := natssink.New(srv.JetStream, tc.cfg)
			require.Nil(t, s)
			require.ErrorIs(t, err, natssink.ErrInvalidConfig)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
			require.Len(t, strings.Split(err.Error(), "\n"), len(tc.want), "one line per bad field: %v", err)
		})
	}

	// natssink's fields and the sink's in one error (before, the sink's
	// were checked only once natssink's had passed).
	t.Run("natssink's and the sink's fields at once", func(t *testing.T) {
		_, err := natssink.New(srv.JetStream, natssink.Config[event]{Subject: "e", Encode: encodeEvent,
			MaxInFlight: -1, RetryBudget: -time.Second,
			Sink: sink.Config[event]{Shards: -1, BatchSize: -3},
		})
		require.ErrorIs(t, err, natssink.ErrInvalidConfig)
		require.ErrorIs(t, err, sink.ErrInvalidConfig)
		for _, w := range []string{"MaxInFlight = -1", "RetryBudget = -1s", "Shards = -1", "BatchSize = -3"} {
			require.Contains(t, err.Error(), w)
		}
	})

	t.Run("the sink's knobs are checked by the sink", func(t *testing.T) {
		_, err := natssink.New(srv.JetStream, natssink.Config[event]{Subject: "e", Encode: encodeEvent, Sink: sink.Config[event]{Shards: -1, RingCapacity: -5}})
		require.ErrorIs(t, err, natssink.ErrInvalidConfig)
		require.ErrorIs(t, err, sink.ErrInvalidConfig)
		require.Contains(t, err.Error(), "Shards = -1")
		require.Contains(t, err.Error(), "RingCapacity = -5")
	})

	t.Run("no JetStream context", func(t *testing.T) {
		_, err := natssink.New[event](nil, natssink.Config[event]{Subject: "e", Encode: encodeEvent})
		require.ErrorIs(t, err, natssink.ErrInvalidConfig)
		require.Contains(t, err.Error(), "js = nil")
	})

	t.Run("a closed connection", func(t *testing.T) {
		nc, js, err := natssink.Connect(srv.URL)
		require.NoError(t, err)
		nc.Close()
		_, err = natssink.New(js, natssink.Config[event]{Subject: "e", Encode: encodeEvent})
		require.ErrorIs(t, err, natssink.ErrInvalidConfig)
		require.Contains(t, err.Error(), "is closed")
	})
}
