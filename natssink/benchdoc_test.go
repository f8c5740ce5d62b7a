package natssink_test

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the generated table in docs/benchmarks.md from testdata/bench.txt")

// TestBenchmarksDocMatchesBenchTxt renders the NATS table of
// docs/benchmarks.md from testdata/bench.txt (which bash
// natssink/testdata/bench.sh writes) and compares it with the block between
// the natssink:begin and natssink:end markers, so that the figures in the
// documentation are the committed run's (-update rewrites the block).
func TestBenchmarksDocMatchesBenchTxt(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "bench.txt"))
	require.NoError(t, err)
	want, err := renderBenchTable(raw)
	require.NoError(t, err, "testdata/bench.txt")
	doc := filepath.Join("..", "docs", "benchmarks.md")
	data, err := os.ReadFile(doc)
	require.NoError(t, err)
	text := string(data)
	begin, end := "<!-- natssink:begin", "<!-- natssink:end -->"
	i, j := strings.Index(text, begin), strings.Index(text, end)
	require.True(t, i >= 0 && j > i, "%s has no natssink:begin/end block", doc)
	i += strings.Index(text[i:], "\n") + 1
	if *update {
		require.NoError(t, os.WriteFile(doc, []byte(text[:i]+want+text[j:]), 0o644))
		return
	}
	require.Equal(t, want, text[i:j], "%s: the natssink table differs from testdata/bench.txt; rerun with -update", doc)
}

// benchRows are the table's rows: BenchmarkProducers' impls.
var benchRows = []struct{ impl, label string }{
	{"natssink", "natssink (rings that hold the burst)"},
	{"natssink-default-rings", "natssink, default rings"},
	{"publish", "each producer calls js.Publish"},
	{"publishasync", "each producer calls js.PublishAsync"},
	{"publishasync-msgid", "js.PublishAsync with a Nats-Msg-Id per message"},
}

func renderBenchTable(raw []byte) (string, error) {
	values, header, end, err := parseBenchTxt(raw)
	if err != nil {
		return "", err
	}
	get := func(impl, unit string) []float64 { return values["BenchmarkProducers/impl="+impl][unit] }
	var b strings.Builder
	fmt.Fprintf(&b, "Measured by `bash natssink/testdata/bench.sh` (natssink/testdata/bench.txt): %s; %s. 64 producer goroutines, "+
		"~195-byte values, an embedded server with a memory stream; medians (min-max) of the runs. Producer p99: one call (Push, "+
		"Publish or PublishAsync); CPU: the whole process's (server, client, producers) per acked value.\n\n", header, end)
	b.WriteString("| producers push through | acked/s | vs natssink | producer p99 | dropped | CPU per acked value | allocations per value |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	ours := median(get("natssink", "acked/s"))
	for _, r := range benchRows {
		acked := get(r.impl, "acked/s")
		if len(acked) == 0 {
			return "", fmt.Errorf("no acked/s for impl=%s", r.impl)
		}
		fmt.Fprintf(&b, "| %s | %s | %.2fx | %s | %s | %s | %s |\n", r.label,
			spread(acked, 1e-3, 1, " k"), ours/median(acked),
			spread(get(r.impl, "p99-ns"), 1e-3, 1, " µs"), spread(get(r.impl, "drop-%"), 1, 1, " %"),
			spread(get(r.impl, "cpu-ns/acked"), 1e-3, 1, " µs"), spread(get(r.impl, "allocs/op"), 1, 0, ""))
	}
	if d := values["BenchmarkDrainPath"]["allocs/op"]; len(d) > 0 {
		fmt.Fprintf(&b, "\nThe drain path alone (BenchmarkDrainPath): %s allocations per value.\n", spread(d, 1, 0, ""))
	}
	return b.String(), nil
}

// parseBenchTxt reads benchfmt lines (name without the -GOMAXPROCS suffix,
// unit: values) and bench.sh's header and end lines.
func parseBenchTxt(raw []byte) (values map[string]map[string][]float64, header, end string, err error) {
	values = map[string]map[string][]float64{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "# end "):
			end = strings.TrimPrefix(line, "# end ")
		case strings.HasPrefix(line, "# ") && header == "":
			header = strings.TrimPrefix(line, "# ")
		case strings.HasPrefix(line, "Benchmark"):
			f := strings.Fields(line)
			if len(f) < 4 || len(f)%2 != 0 {
				continue
			}
			name := f[0]
			if k := strings.LastIndexByte(name, '-'); k > 0 {
				if _, err := strconv.Atoi(name[k+1:]); err == nil {
					name = name[:k]
				}
			}
			if values[name] == nil {
				values[name] = map[string][]float64{}
			}
			for k := 2; k+1 < len(f); k += 2 {
				v, perr := strconv.ParseFloat(f[k], 64)
				if perr != nil {
					return nil, "", "", fmt.Errorf("%q: %v", line, perr)
				}
				values[name][f[k+1]] = append(values[name][f[k+1]], v)
			}
		}
	}
	if header == "" || end == "" {
		return nil, "", "", fmt.Errorf("no header or end line (bench.sh writes both)")
	}
	return values, header, end, sc.Err()
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// spread is "median (min-max)" of xs times scale, with prec decimals, then
// suffix.
func spread(xs []float64, scale float64, prec int, suffix string) string {
	if len(xs) == 0 {
		return ""
	}
	return fmt.Sprintf("%.*f (%.*f-%.*f)%s", prec, scale*median(xs), prec, scale*slices.Min(xs), prec, scale*slices.Max(xs), suffix)
}
