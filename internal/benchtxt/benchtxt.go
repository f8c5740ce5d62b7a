// Package benchtxt reads what the integrations' testdata/bench.sh scripts
// write (benchfmt lines between a "# " header line and a "# end " line) and
// keeps the tables rendered from it in step with the documents that show
// them: each package's drift test renders its table from its committed
// bench.txt and calls [SyncBlock], which fails when the document's block
// differs and rewrites it under -update. It is used by tests only.
package benchtxt

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Run is one bench.sh output.
type Run struct {
	// Values holds every value of every metric: benchmark name (without
	// its -GOMAXPROCS suffix), then unit, then the values in file order.
	Values map[string]map[string][]float64
	Header string // the first "# " line, after "# "
	End    string // the "# end " line, after "# end "
	CPU    string // the "cpu: " line of go test, after "cpu: "
}

// Parse reads a bench.sh output; it needs the header and the end line,
// which bench.sh writes around the go test runs.
func Parse(raw []byte) (*Run, error) {
	r := &Run{Values: map[string]map[string][]float64{}}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "# end "):
			r.End = strings.TrimPrefix(line, "# end ")
		case strings.HasPrefix(line, "# ") && r.Header == "":
			r.Header = strings.TrimPrefix(line, "# ")
		case strings.HasPrefix(line, "cpu: "):
			r.CPU = strings.TrimSpace(strings.TrimPrefix(line, "cpu: "))
		case strings.HasPrefix(line, "Benchmark"):
			if err := r.add(line); err != nil {
				return nil, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if r.Header == "" || r.End == "" {
		return nil, fmt.Errorf("benchtxt: no header or end line (bench.sh writes both)")
	}
	return r, nil
}

// add records the metrics of one benchfmt line: name, iterations, then
// value-unit pairs. A line of another shape (a benchmark's log) is skipped.
func (r *Run) add(line string) error {
	f := strings.Fields(line)
	if len(f) < 4 || len(f)%2 != 0 {
		return nil
	}
	name := f[0]
	if k := strings.LastIndexByte(name, '-'); k > 0 {
		if _, err := strconv.Atoi(name[k+1:]); err == nil {
			name = name[:k]
		}
	}
	if r.Values[name] == nil {
		r.Values[name] = map[string][]float64{}
	}
	for k := 2; k+1 < len(f); k += 2 {
		v, err := strconv.ParseFloat(f[k], 64)
		if err != nil {
			return fmt.Errorf("benchtxt: %q: %v", line, err)
		}
		r.Values[name][f[k+1]] = append(r.Values[name][f[k+1]], v)
	}
	return nil
}

// Median is the median of xs, 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Spread is "median (min-max)" of xs times scale, with prec decimals, then
// suffix; "" for none.
func Spread(xs []float64, scale float64, prec int, suffix string) string {
	if len(xs) == 0 {
		return ""
	}
	return fmt.Sprintf("%.*f (%.*f-%.*f)%s", prec, scale*Median(xs), prec, scale*slices.Min(xs), prec, scale*slices.Max(xs), suffix)
}

// SyncBlock compares want with the block of the file at path that lies
// between the line beginning "<!-- name:begin" and the marker
// "<!-- name:end -->". When they differ it rewrites the block if update
// is set, and otherwise returns an error that shows both and says how to
// regenerate.
func SyncBlock(path, name, want string, update bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := string(data)
	begin, end := "<!-- "+name+":begin", "<!-- "+name+":end -->"
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %s:begin/end pair of markers", path, name)
	}
	i += strings.Index(text[i:], "\n") + 1
	if got := text[i:j]; got == want {
		return nil
	} else if !update {
		return fmt.Errorf("%s: the %q block is not what the committed run renders; rerun the test with -update\nIn the file:\n%s\nRendered:\n%s", path, name, got, want)
	}
	return os.WriteFile(path, []byte(text[:i]+want+text[j:]), 0o644)
}
