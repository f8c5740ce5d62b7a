package slogsink_test

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// A record waits in its worker's batch for at most MaxDelay (on fake time):
// not written before, written after, with no Flush.
func TestARecordIsWrittenWithinMaxDelay(t *testing.T) {
	for _, delay := range []time.Duration{0, 5 * time.Millisecond} {
		t.Run("MaxDelay="+delay.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var got writes
				h, err := slogsink.New(&got, &slogsink.Options{Buffering: logsink.Buffering{Shards: 1, MaxDelay: delay}})
				require.NoError(t, err)
				want := delay
				if want == 0 {
					want = logsink.DefaultMaxDelay
				}
				slog.New(h).Info("held")
				synctest.Wait() // the worker took the record and waits for more
				require.Empty(t, got.lines(), "written before MaxDelay")
				time.Sleep(want - time.Nanosecond)
				synctest.Wait()
				require.Empty(t, got.lines(), "written before MaxDelay")
				time.Sleep(time.Nanosecond)
				synctest.Wait()
				require.Len(t, got.lines(), 1, "not written once MaxDelay passed")
				require.NoError(t, h.Close(context.Background()))
			})
		})
	}
}

// A negative MaxDelay writes each batch at once, and Flush never waits for
// MaxDelay whatever it is.
func TestANegativeMaxDelayWritesAtOnceAndFlushNeverWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got writes
		h, err := slogsink.New(&got, &slogsink.Options{Buffering: logsink.Buffering{Shards: 1, MaxDelay: -1}})
		require.NoError(t, err)
		slog.New(h).Info("at once")
		synctest.Wait()
		require.Len(t, got.lines(), 1)
		require.NoError(t, h.Close(context.Background()))
	})
	synctest.Test(t, func(t *testing.T) {
		var got writes
		h, err := slogsink.New(&got, &slogsink.Options{Buffering: logsink.Buffering{Shards: 1, MaxDelay: time.Hour}})
		require.NoError(t, err)
		slog.New(h).Info("flushed")
		start := time.Now()
		require.NoError(t, h.Flush(context.Background()))
		require.Len(t, got.lines(), 1)
		require.Less(t, time.Since(start), time.Second, "Flush waited for MaxDelay")
		require.NoError(t, h.Close(context.Background()))
	})
}
