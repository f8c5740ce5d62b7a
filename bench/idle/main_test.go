package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardedsink/shardedsink/sink"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseDefaults(t *testing.T) {
	o, err := parse(nil, io.Discard)
	require.NoError(t, err)
	require.Equal(t, options{format: "markdown", duration: 5 * time.Second, samples: 200, mode: sink.IdleWake}, o)
}

func TestParseFlags(t *testing.T) {
	o, err := parse(strings.Fields("-format json -duration 2s -samples 7 -mode poll -shards 8 -producer busy"), io.Discard)
	require.NoError(t, err)
	require.Equal(t, options{format: "json", duration: 2 * time.Second, samples: 7, mode: sink.IdlePoll, shards: 8, busy: true}, o)
}

func TestParseRejectsBadFlags(t *testing.T) {
	for _, args := range []string{
		"-format svg", "-duration 0s", "-samples 0", "-mode spin", "-shards -1", "-producer lazy", "extra",
	} {
		_, err := parse(strings.Fields(args), io.Discard)
		require.Error(t, err, args)
	}
	_, err := parse([]string{"-h"}, io.Discard)
	require.True(t, errors.Is(err, flag.ErrHelp))
}

func TestRunJSONShape(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(strings.Fields("-format json -duration 50ms -samples 5"), &out, io.Discard))
	var got map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	require.Equal(t, []string{"idle_cpu_pct", "machine", "pickup_p50_us", "pickup_p99_us"}, keys)
	for _, k := range []string{"idle_cpu_pct", "pickup_p50_us", "pickup_p99_us"} {
		v, ok := got[k].(float64)
		require.True(t, ok, "%s is a number", k)
		require.GreaterOrEqual(t, v, 0.0, k)
	}
	require.Positive(t, got["pickup_p50_us"])
	m, ok := got["machine"].(map[string]any)
	require.True(t, ok)
	require.Contains(t, m, "gomaxprocs")
}

func TestRunMarkdownSmoke(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(strings.Fields("-duration 20ms -samples 3 -mode poll -shards 3 -producer busy"), &out, io.Discard))
	s := out.String()
	require.Contains(t, s, "| idle mode | shards |")
	require.Contains(t, s, "| poll | 3 |")
}
