package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// wantImpls is the table's row families, in order, as the JSON names them.
func wantImpls() []string {
	names := []string{"sharded-vyukov", "sharded-mutex", "sharded-chanring"}
	if buildFlags != "" { // the zenq build
		names = append(names, "sharded-zenq")
	}
	return append(names, "unsharded-vyukov", "single-vyukov", "single-mutex", "single-chan",
		"xsync", "workiva", "diodes", "lscq")
}

func TestImplNames(t *testing.T) {
	require.Equal(t, wantImpls(), implNames(impls()))
}

func TestSelectImpls(t *testing.T) {
	t.Run("it keeps table order", func(t *testing.T) {
		got, err := selectImpls("lscq, sharded-vyukov")
		require.NoError(t, err)
		require.Equal(t, []string{"sharded-vyukov", "lscq"}, implNames(got))
	})
	t.Run("it rejects unknown names", func(t *testing.T) {
		_, err := selectImpls("sharded-vyukov,nope")
		require.ErrorContains(t, err, `"nope"`)
	})
	t.Run("an empty list selects everything", func(t *testing.T) {
		got, err := selectImpls("")
		require.NoError(t, err)
		require.Len(t, got, len(wantImpls()))
	})
}

func TestFlags(t *testing.T) {
	t.Run("-h prints every flag", func(t *testing.T) {
		var stderr bytes.Buffer
		err := run([]string{"-h"}, io.Discard, &stderr)
		require.True(t, errors.Is(err, flag.ErrHelp))
		for _, f := range []string{"-producers", "-items", "-trials", "-shards", "-impls", "-format", "-o", "-shed", "-idle", "-from", "-q"} {
			require.Regexp(t, `\n  `+f+`[ \n\t]`, stderr.String(), "flag %s", f)
		}
	})
	t.Run("bad values are errors", func(t *testing.T) {
		for _, args := range [][]string{
			{"-producers", "1,x"}, {"-producers", "0"}, {"-items", "5"}, {"-trials", "0"},
			{"-shards", "0"}, {"-format", "csv"}, {"-idle", "spin"}, {"-impls", "bogus"},
		} {
			_, err := parseFlags(args, io.Discard)
			require.Error(t, err, "%v", args)
		}
	})
}

// smokeJSON runs the whole harness once with tiny counts and keeps its JSON.
var smoke struct {
	out []byte
	err error
	ran bool
}

func smokeRun(t *testing.T) []byte {
	t.Helper()
	if !smoke.ran {
		smoke.ran = true
		var out bytes.Buffer
		smoke.err = run([]string{"-items", "200", "-producers", "1,4", "-trials", "1", "-format", "json", "-q"}, &out, io.Discard)
		smoke.out = out.Bytes()
	}
	require.NoError(t, smoke.err)
	return smoke.out
}

func TestSmokeRun(t *testing.T) {
	var res Result
	require.NoError(t, json.Unmarshal(smokeRun(t), &res))
	require.Len(t, res.Rows, 2*len(wantImpls()))
	for _, r := range res.Rows {
		require.Positive(t, r.CPUNsPerOp, "%s@%d", r.Impl, r.Producers)
		require.Positive(t, r.ThroughputPerS, "%s@%d", r.Impl, r.Producers)
		require.LessOrEqual(t, r.P99Ns, r.P999Ns)
		require.LessOrEqual(t, r.P999Ns, r.MaxNs)
		if r.Impl == "xsync" || r.Impl == "workiva" {
			continue // they give up on a lost CAS: contention shows up as drops
		}
		require.Zero(t, r.DropPct, "%s@%d dropped on the accept path", r.Impl, r.Producers)
	}
	require.NotEmpty(t, res.ShedRows)
	for _, r := range res.ShedRows {
		require.Equal(t, 100.0, r.RejectedPct, "shed %s@%d", r.Impl, r.Producers)
		require.Positive(t, r.CPUNsPerOp)
	}
}

func TestJSONShape(t *testing.T) {
	var doc map[string]any
	require.NoError(t, json.Unmarshal(smokeRun(t), &doc))
	require.ElementsMatch(t, []string{"machine", "config", "rows", "shed_rows", "caveats"}, slices.Collect(maps.Keys(doc)))

	machine := doc["machine"].(map[string]any)
	for _, k := range []string{"cpu", "cores", "gomaxprocs", "go_version"} {
		require.Contains(t, machine, k)
	}

	rowKeys := []string{"impl", "producers", "cpu_ns_per_op", "drop_pct", "throughput_per_s", "p99_ns", "p999_ns", "max_ns"}
	var impls []string
	for _, r := range doc["rows"].([]any) {
		row := r.(map[string]any)
		require.ElementsMatch(t, rowKeys, slices.Collect(maps.Keys(row)))
		require.IsType(t, "", row["impl"])
		require.IsType(t, 0.0, row["producers"])
		if !slices.Contains(impls, row["impl"].(string)) {
			impls = append(impls, row["impl"].(string))
		}
	}
	require.Equal(t, wantImpls(), impls)

	shedImpls := []string{}
	for _, r := range doc["shed_rows"].([]any) {
		row := r.(map[string]any)
		require.ElementsMatch(t, []string{"impl", "producers", "cpu_ns_per_op", "rejected_pct"}, slices.Collect(maps.Keys(row)))
		if !slices.Contains(shedImpls, row["impl"].(string)) {
			shedImpls = append(shedImpls, row["impl"].(string))
		}
	}
	require.Equal(t, slices.DeleteFunc(wantImpls(), func(s string) bool { return !strings.HasPrefix(s, "sharded-") }), shedImpls)

	caveats := doc["caveats"].(map[string]any)
	for _, k := range []string{"single-chan", "xsync", "workiva", "diodes", "lscq"} {
		require.NotEmpty(t, caveats[k], "caveat of %s", k)
	}
}

func TestMarkdown(t *testing.T) {
	var res Result
	require.NoError(t, json.Unmarshal(smokeRun(t), &res))
	var b bytes.Buffer
	require.NoError(t, writeMarkdown(&b, &res))
	md := b.String()
	require.True(t, strings.HasPrefix(md, "Machine: "+res.Machine.String()+"\n"))
	require.Contains(t, md, "| impl | producers | cpu ns/op | drop % | throughput/s | p99 | p99.9 | max |")
	require.Contains(t, md, "| impl | producers | cpu ns/op | rejected % |")
	require.Contains(t, md, "- **xsync**: ")
	require.Contains(t, md, "./bench/contended -items 200 -producers 1,4")
}

func TestFrom(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	require.NoError(t, os.WriteFile(path, smokeRun(t), 0o644))
	var md bytes.Buffer
	require.NoError(t, run([]string{"-from", path}, &md, io.Discard))
	require.Contains(t, md.String(), "./bench/contended -items 200 -producers 1,4 -trials 1 -format json -q`")
	svg := filepath.Join(t.TempDir(), "chart.svg")
	require.NoError(t, run([]string{"-from", path, "-format", "svg", "-o", svg}, io.Discard, io.Discard))
	doc, err := os.ReadFile(svg)
	require.NoError(t, err)
	lines, _ := svgCount(t, doc)
	require.Equal(t, len(wantImpls()), lines)
}

func TestSVG(t *testing.T) {
	t.Run("it is well-formed XML with one line per implementation", func(t *testing.T) {
		var res Result
		require.NoError(t, json.Unmarshal(smokeRun(t), &res))
		var b bytes.Buffer
		require.NoError(t, writeSVG(&b, &res))
		lines, groups := svgCount(t, b.Bytes())
		require.Equal(t, len(wantImpls()), lines)
		require.Equal(t, wantImpls(), groups)
	})
	t.Run("it escapes text and draws any implementation", func(t *testing.T) {
		res := &Result{Rows: []Row{
			{Impl: "a<&>", Producers: 1, CPUNsPerOp: 3},
			{Impl: "a<&>", Producers: 8, CPUNsPerOp: 3000},
			{Impl: "b", Producers: 8, CPUNsPerOp: 0.5},
		}}
		res.Machine.CPU = `"quoted" & <odd>`
		var b bytes.Buffer
		require.NoError(t, writeSVG(&b, res))
		lines, groups := svgCount(t, b.Bytes())
		require.Equal(t, 2, lines)
		require.Equal(t, []string{"a<&>", "b"}, groups)
	})
	t.Run("it refuses an empty table", func(t *testing.T) {
		require.Error(t, writeSVG(io.Discard, &Result{}))
	})
}

// svgCount decodes an SVG document and returns its polyline count and the
// implementations of its line groups.
func svgCount(t *testing.T, doc []byte) (polylines int, impls []string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	root := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if !root {
			require.Equal(t, "svg", se.Name.Local)
			root = true
		}
		switch se.Name.Local {
		case "polyline":
			polylines++
		case "g":
			for _, a := range se.Attr {
				if a.Name.Local == "data-impl" {
					impls = append(impls, a.Value)
				}
			}
		}
	}
	require.True(t, root)
	return polylines, impls
}
