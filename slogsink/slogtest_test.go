package slogsink_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"testing/slogtest"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/logsink"
	"github.com/shardedsink/shardedsink/slogsink"
)

// TestSlogtest runs the standard library's handler test suite over a
// handler of two shards, flushing before each result is read.
func TestSlogtest(t *testing.T) {
	var (
		got *writes
		h   *slogsink.Handler
	)
	slogtest.Run(t, func(t *testing.T) slog.Handler {
		got = &writes{}
		h = newHandler(t, got, &slogsink.Options{Buffering: logsink.Buffering{Shards: 2}})
		return h
	}, func(t *testing.T) map[string]any {
		require.NoError(t, h.Flush(context.Background()))
		lines := got.lines()
		require.Len(t, lines, 1)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(lines[0]), &m))
		return m
	})
}
