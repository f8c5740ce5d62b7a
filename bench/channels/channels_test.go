package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkChannels runs the rows of the table as go test benchmarks, so
// that benchstat can compare implementations and revisions:
//
//	go test -run '^$' -bench . -count 10 ./bench/channels/ > new.txt
//	benchstat -col /impl new.txt
//
// A single-goroutine row's op is one send+recv (or one burst of 1024
// try-sends and 1024 try-recvs); a crew row's op is a whole run of
// benchItems messages per sender, also reported as ns/msg.
func BenchmarkChannels(b *testing.B) {
	const benchItems = 10000
	for _, r := range rows {
		for _, impl := range impls() {
			b.Run("case="+r.name+"/impl="+impl, func(b *testing.B) {
				b.ReportAllocs()
				if r.single != nil {
					if !singleSupported(impl, r.name) {
						b.Skip("not supported")
					}
					// b.N ops in one timed call.
					items := b.N
					if strings.HasPrefix(r.name, "burst") { // one op is one burst
						items = b.N * burst
					}
					b.ResetTimer()
					r.single(impl, items)
					return
				}
				var total float64
				for b.Loop() {
					ns, ok := r.run(impl, benchItems)
					if !ok {
						b.Skip("not supported")
					}
					total += ns
				}
				if r.unit != "msg" {
					b.ReportMetric(total/float64(b.N)/float64(r.senders*benchItems), "ns/msg")
				}
			})
		}
	}
}

func TestJSONHasTheAgreedShape(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run([]string{"-format", "json", "-trials", "1", "-items", "64"}, &out, &out))

	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc))
	require.Len(t, doc, 2, "exactly machine and rows")
	require.Contains(t, doc, "machine")
	require.Contains(t, doc, "rows")

	var machine map[string]any
	require.NoError(t, json.Unmarshal(doc["machine"], &machine))
	for _, k := range []string{"cpu", "cores", "gomaxprocs", "go_version", "os", "arch"} {
		require.Contains(t, machine, k)
	}

	var results []map[string]any
	require.NoError(t, json.Unmarshal(doc["rows"], &results))
	seen := map[string]map[string]bool{}
	for _, r := range results {
		require.Len(t, r, 3, "a row has exactly case, impl and ns: %v", r)
		name, ok := r["case"].(string)
		require.True(t, ok, "case is a string: %v", r)
		impl, ok := r["impl"].(string)
		require.True(t, ok, "impl is a string: %v", r)
		require.Contains(t, []string{"mpmc", "chan", "zenq"}, impl)
		ns, ok := r["ns"].(float64)
		require.True(t, ok, "ns is a number: %v", r)
		require.Greater(t, ns, 0.0)
		if seen[name] == nil {
			seen[name] = map[string]bool{}
		}
		seen[name][impl] = true
	}
	require.Len(t, seen, len(rows), "every case is measured")
	for name, impls := range seen {
		require.True(t, impls["mpmc"] && impls["chan"], "case %s has mpmc and chan", name)
	}
}

func TestMarkdownSmokeRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run([]string{"-trials", "1", "-items", "32"}, &out, &out))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// machine line, blank line, header, separator, one line per case.
	require.Len(t, lines, 4+len(rows), out.String())
	require.True(t, strings.HasPrefix(lines[2], "| case | what is timed | mpmc | chan | mpmc/chan |"), lines[2])
	for _, r := range rows {
		require.Contains(t, out.String(), "| "+r.name+" |")
	}
}

func TestBadFlagsAreErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-format", "svg"},
		{"-trials", "0"},
		{"-items", "0"},
		{"-run", "("},
	} {
		var out bytes.Buffer
		require.Error(t, run(args, &out, &out), "args %v", args)
	}
}
