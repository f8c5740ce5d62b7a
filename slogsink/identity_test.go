package slogsink_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// The accounting identity as Stats, the package doc and promsink's doc
// write it, spill terms included: a handler with a SpillDir whose Close
// ends during a stall moves what is buffered to disk (OnDisk), not to
// Abandoned, and the identity still counts every record. Without the
// spill terms (the identity as promsink's doc wrote it before) this case
// came out 1 written of 400.
func TestTheIdentityCountsTheSpillDirectory(t *testing.T) {
	w := &heldWriter{entered: make(chan struct{}), release: make(chan struct{})}
	h, err := slogsink.New(w, &slogsink.Options{Buffering: logsink.Buffering{Shards: 1, BatchSize: 1, SpillDir: t.TempDir()}})
	require.NoError(t, err)
	lg := slog.New(h)
	const records = 400
	for i := range records {
		lg.Info("buffered", "i", i)
	}
	<-w.entered
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, h.Close(ctx), context.DeadlineExceeded)
	close(w.release)
	<-h.Done()
	st := h.Stats()
	require.Positive(t, st.OnDisk, "nothing went to disk: the test shows nothing (%+v)", st)
	handled := st.Written + st.Dropped + st.Errors + st.Abandoned + st.Empty + st.LostOnDisk + uint64(st.OnDisk) - st.Recovered
	require.Equal(t, uint64(records), handled, "Written + Dropped + Errors + Abandoned + Empty + LostOnDisk + OnDisk - Recovered: %+v", st)
}
