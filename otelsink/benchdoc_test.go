package otelsink_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMeasuredTableMatchesBenchTxt renders README.md's measured table from
// testdata/bench.txt (which bash testdata/bench.sh writes) and compares it
// with the block between the measured:begin and measured:end markers, so
// that the figures in the README are the committed run's and cannot drift
// (-update rewrites the block; bench.sh does so at its end).
func TestMeasuredTableMatchesBenchTxt(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "bench.txt"))
	require.NoError(t, err)
	table, err := renderMeasured(raw)
	require.NoError(t, err, "testdata/bench.txt")
	requireGenerated(t, "README.md", "measured", table)
}

// measuredRows are the table's rows: a benchmark (with %s for the
// processor), its two processors' names there, and the metrics shown.
var measuredRows = []struct {
	label, bench, sdk, ours, cpuUnit string
}{
	{"whole span, 1 goroutine", "BenchmarkExportedShare/g=1/impl=%s", "bsp", "otelsink", "cpu-ns/span"},
	{"whole span, 64 goroutines", "BenchmarkExportedShare/g=64/impl=%s", "bsp", "otelsink", "cpu-ns/span"},
	{"OnEnd on a span made once, 64 goroutines", "BenchmarkOnEndThreads/exporter=noop/g=64/impl=%s", "bsp", "otelsink", "cpu-ns/span"},
	{"OnEmit, 1 goroutine", "BenchmarkOnEmitThreads/g=1/impl=%s", "batchprocessor", "otelsink", "cpu-ns/record"},
	{"OnEmit, 16 goroutines", "BenchmarkOnEmitThreads/g=16/impl=%s", "batchprocessor", "otelsink", "cpu-ns/record"},
	{"OnEmit, 64 goroutines", "BenchmarkOnEmitThreads/g=64/impl=%s", "batchprocessor", "otelsink", "cpu-ns/record"},
}

// renderMeasured is the generated block: the run's header, then per row
// the CPU per item and the exported share of both processors, medians
// (min-max) of the runs, and the ratio of the CPU medians.
func renderMeasured(raw []byte) (string, error) {
	values, header, end, cpu, err := parseBenchTxt(raw)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Measured by `bash otelsink/testdata/bench.sh` (testdata/bench.txt): %s, %s; %s. Medians (min-max) of the runs; "+
		"CPU is per-thread CPU (`CLOCK_THREAD_CPUTIME_ID`) summed over the locked threads, per item; exported is the share of the items ended "+
		"or emitted that reached the exporter, counted after Shutdown.\n\n", cpu, header, end)
	b.WriteString("| items | SDK's CPU ns | otelsink's CPU ns | otelsink / SDK | SDK exported | otelsink exported |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|\n")
	for _, r := range measuredRows {
		sdk, ours := values[fmt.Sprintf(r.bench, r.sdk)], values[fmt.Sprintf(r.bench, r.ours)]
		if len(sdk[r.cpuUnit]) == 0 || len(ours[r.cpuUnit]) == 0 {
			return "", fmt.Errorf("no %s for %s", r.cpuUnit, fmt.Sprintf(r.bench, r.sdk+"|"+r.ours))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.2fx | %s | %s |\n", r.label,
			spread(sdk[r.cpuUnit], 0, ""), spread(ours[r.cpuUnit], 0, ""), median(ours[r.cpuUnit])/median(sdk[r.cpuUnit]),
			spread(sdk["exported-%"], 1, " %"), spread(ours["exported-%"], 1, " %"))
	}
	return b.String(), nil
}

// parseBenchTxt reads benchfmt lines (name without the -GOMAXPROCS suffix,
// unit: values), bench.sh's header and end lines and the cpu line.
func parseBenchTxt(raw []byte) (values map[string]map[string][]float64, header, end, cpu string, err error) {
	values = map[string]map[string][]float64{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "# end "):
			end = strings.TrimPrefix(line, "# end ")
		case strings.HasPrefix(line, "# ") && header == "":
			header = strings.TrimPrefix(line, "# ")
		case strings.HasPrefix(line, "cpu: "):
			cpu = strings.TrimSpace(strings.TrimPrefix(line, "cpu: "))
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
					return nil, "", "", "", fmt.Errorf("%q: %v", line, perr)
				}
				values[name][f[k+1]] = append(values[name][f[k+1]], v)
			}
		}
	}
	if header == "" || end == "" {
		return nil, "", "", "", fmt.Errorf("no header or end line (bench.sh writes both)")
	}
	return values, header, end, cpu, sc.Err()
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// spread is "median (min-max)" with prec decimals, then suffix.
func spread(xs []float64, prec int, suffix string) string {
	if len(xs) == 0 {
		return ""
	}
	return fmt.Sprintf("%.*f (%.*f-%.*f)%s", prec, median(xs), prec, slices.Min(xs), prec, slices.Max(xs), suffix)
}
