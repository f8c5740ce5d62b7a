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

func TestCloseReturnsCtxErrItselfWhenCtxEndsFirst(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 20*time.Millisecond)
		}, context.DeadlineExceeded},
		{"cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(20*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled},
	} {
		t.Run("ctx "+tc.name, func(t *testing.T) {
			w := &heldWriter{entered: make(chan struct{}), release: make(chan struct{})}
			h, err := slogsink.New(w, &slogsink.Options{Buffering: logsink.Buffering{Shards: 1, BatchSize: 1}})
			require.NoError(t, err)
			lg := slog.New(h)
			for i := range 10 {
				lg.Info("buffered", "i", i)
			}
			<-w.entered
			ctx, cancel := tc.ctx()
			defer cancel()
			err = h.Close(ctx)
			require.Equal(t, tc.want, err, "Close returns ctx.Err() itself, not an error that wraps it")
			require.Equal(t, tc.want, h.Close(context.Background()), "a later Close returns the first one's result")
			close(w.release)
			<-h.Done()
			st := h.Stats()
			require.Positive(t, st.Abandoned)
			require.Equal(t, uint64(10), st.Written+st.Abandoned+st.Errors, "%+v", st)
		})
	}
}
