package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// The benchfmt output (golang.org/x/perf/benchfmt, the format of go test
// -bench): a header of key: value lines, then one line per trial,
//
//	BenchmarkContended/consumers=held/payload=8/impl=sharded-vyukov/producers=64 1280000 21.4 cpu-ns/op ...
//
// so that benchstat can compare trials and runs:
//
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl old.txt new.txt

// WriteBenchHeader writes the configuration lines that benchstat reads
// before the results: goos, goarch, pkg, cpu, and the go version and load
// average of the run.
func WriteBenchHeader(w io.Writer, pkg string, run Run) error {
	m := run.Machine
	_, err := fmt.Fprintf(w, "goos: %s\ngoarch: %s\npkg: %s\ncpu: %s\ngo: %s\ngomaxprocs: %d\nload-before: %s\n",
		m.OS, m.Arch, pkg, m.CPU, m.GoVersion, m.GOMAXPROCS, FormatLoad(run.LoadBefore))
	return err
}

// Metric is one value of a benchmark line and its unit ("cpu-ns/op").
type Metric struct {
	Value float64
	Unit  string
}

// WriteBenchLine writes one benchmark result line: the name (which must
// start with "Benchmark" and contain no spaces), the iteration count, and
// the metrics. Metrics that are NaN are left out.
func WriteBenchLine(w io.Writer, name string, iterations int64, metrics ...Metric) error {
	if !strings.HasPrefix(name, "Benchmark") || strings.ContainsAny(name, " \t\n") {
		return fmt.Errorf("benchfmt: bad benchmark name %q", name)
	}
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte(' ')
	b.WriteString(strconv.FormatInt(max(iterations, 1), 10))
	for _, m := range metrics {
		if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
			continue
		}
		if m.Unit == "" || strings.ContainsAny(m.Unit, " \t\n") {
			return fmt.Errorf("benchfmt: bad unit %q", m.Unit)
		}
		b.WriteByte(' ')
		b.WriteString(strconv.FormatFloat(m.Value, 'g', 6, 64))
		b.WriteByte(' ')
		b.WriteString(m.Unit)
	}
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

// BenchKey writes a benchmark name's key=value part, replacing characters
// that benchfmt gives a meaning to (space, '/' and '=') in the value.
func BenchKey(key, value string) string {
	return key + "=" + strings.NewReplacer(" ", "_", "/", "_", "=", "_").Replace(value)
}
