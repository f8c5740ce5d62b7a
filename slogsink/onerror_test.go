package slogsink_test

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// refusing is a writer that fails the Writes holding a record whose
// message is "refused" and keeps the others.
type refusing struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

var errRefused = errors.New("writer: refused")

func (w *refusing) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(`"msg":"refused"`)) {
		return 0, errRefused
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *refusing) has(s string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Contains(w.buf.Bytes(), []byte(s))
}

func TestASlowOnErrorHoldsUpNeitherWritesNorLoggingCalls(t *testing.T) {
	w := &refusing{}
	entered := make(chan error, 4)
	release := make(chan struct{})
	var inCall, overlaps atomic.Int32
	var mu sync.Mutex
	var seen []error
	h, err := slogsink.New(w, &slogsink.Options{
		Buffering: logsink.Buffering{Shards: 2},
		Logger:    quiet,
		Format:    func(w io.Writer, o *slog.HandlerOptions) slog.Handler { return failing{slog.NewJSONHandler(w, o)} },
		OnError: func(err error) {
			if inCall.Add(1) > 1 {
				overlaps.Add(1)
			}
			defer inCall.Add(-1)
			mu.Lock()
			seen = append(seen, err)
			mu.Unlock()
			entered <- err
			<-release // slow: until the test lets it go
		},
	})
	require.NoError(t, err)
	released := false
	defer func() {
		if !released {
			close(release)
		}
		require.NoError(t, h.Close(bounded(t, 5*time.Second)))
	}()
	onShard0 := slog.New(h)              // the root's shard, 0
	onShard1 := slog.New(h).With("s", 1) // the next shard, 1
	onShard0.Info("refused")
	select {
	case err := <-entered:
		require.ErrorIs(t, err, errRefused)
	case <-time.After(5 * time.Second):
		t.Fatal("OnError was not called for the failed Write")
	}

	t.Run("another shard's Writes go on", func(t *testing.T) {
		onShard1.Info("written meanwhile")
		deadline := time.Now().Add(5 * time.Second)
		for !w.has("written meanwhile") {
			require.True(t, time.Now().Before(deadline), "shard 1's record was not written while OnError ran for shard 0's")
			time.Sleep(time.Millisecond)
		}
	})
	t.Run("a logging call whose Format fails returns", func(t *testing.T) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			onShard1.Info("fail") // failing's Format error
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("a Handle with a Format error waited for OnError's call for another error")
		}
	})

	close(release)
	released = true
	select {
	case err := <-entered:
		require.ErrorIs(t, err, errFormat, "the Format error is delivered after the call in progress")
	case <-time.After(5 * time.Second):
		t.Fatal("the Format error never reached OnError")
	}
	require.Zero(t, overlaps.Load(), "OnError is called one call at a time")
	st := h.Stats()
	require.Equal(t, uint64(2), st.Errors)
	mu.Lock()
	require.Len(t, seen, 2)
	mu.Unlock()
}

func TestErrorsBeyondTheQueueAreDeliveredAsOne(t *testing.T) {
	w := &refusing{}
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	var mu sync.Mutex
	var seen []error
	h, err := slogsink.New(w, &slogsink.Options{
		Buffering: logsink.Buffering{Shards: 1},
		Logger:    quiet,
		Format:    func(w io.Writer, o *slog.HandlerOptions) slog.Handler { return failing{slog.NewJSONHandler(w, o)} },
		OnError: func(err error) {
			mu.Lock()
			seen = append(seen, err)
			first := len(seen) == 1
			mu.Unlock()
			if first {
				entered <- struct{}{}
				<-release
			}
		},
	})
	require.NoError(t, err)
	lg := slog.New(h)
	go lg.Info("fail") // its OnError call holds the others back
	<-entered
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		for range 100 {
			lg.Info("fail")
		}
	}()
	select {
	case <-logged:
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("logging calls with Format errors waited for the OnError call in progress")
	}
	close(release)
	require.NoError(t, h.Close(bounded(t, 5*time.Second)))
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 1+64+1, "the first, the 64 queued, and one for the rest")
	require.Contains(t, seen[len(seen)-1].Error(), "36 more errors while OnError was busy")
	require.Equal(t, uint64(101), h.Errors())
}
