// Package report holds what the bench commands share: the description of the
// machine a table was measured on, the output formats, the percentile and
// median rules, and the writers for markdown tables and JSON.
package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
)

// Machine names the machine a table was measured on.
type Machine struct {
	CPU        string `json:"cpu"`
	Cores      int    `json:"cores"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
}

// ReadMachine describes the machine the process runs on. The CPU model comes
// from /proc/cpuinfo where there is one, and is "unknown" elsewhere.
func ReadMachine() Machine {
	return Machine{
		CPU:        cpuModel(),
		Cores:      runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		GoVersion:  runtime.Version(),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
	}
}

// String is the one-line label printed above a markdown table.
func (m Machine) String() string {
	return fmt.Sprintf("%s, %d cores, GOMAXPROCS=%d, %s %s/%s",
		m.CPU, m.Cores, m.GOMAXPROCS, m.GoVersion, m.OS, m.Arch)
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown"
}

// Format is an output format of the bench commands.
type Format string

// The formats: a markdown table for people, JSON for machines, and an SVG
// chart where a command draws one.
const (
	Markdown Format = "markdown"
	JSON     Format = "json"
	SVG      Format = "svg"
)

// ParseFormat checks the value of a -format flag against the formats a
// command supports.
func ParseFormat(s string, supported ...Format) (Format, error) {
	for _, f := range supported {
		if Format(s) == f {
			return f, nil
		}
	}
	names := make([]string, len(supported))
	for i, f := range supported {
		names[i] = string(f)
	}
	return "", fmt.Errorf("-format: unknown format %q (want one of %s)", s, strings.Join(names, ", "))
}

// Percentile returns sorted[round(p*(n-1))], clamped to the last element: the
// rule the original harness used. sorted must be in ascending order; p is in
// [0, 1]. It returns 0 for an empty slice.
func Percentile[T int64 | float64](sorted []T, p float64) T {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	i := int(math.Round(p * float64(n-1)))
	i = max(0, min(i, n-1))
	return sorted[i]
}

// Median returns the median of xs without reordering xs: the middle value,
// or the mean of the two middle values for an even count. It returns 0 for an
// empty slice.
func Median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// WriteJSON writes v as indented JSON followed by a newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteTable writes a markdown table. align gives, per column, true for
// right alignment (numbers). A nil align left-aligns the first column and
// right-aligns the rest.
func WriteTable(w io.Writer, header []string, align []bool, rows [][]string) error {
	if align == nil {
		align = make([]bool, len(header))
		for i := 1; i < len(align); i++ {
			align[i] = true
		}
	}
	var b strings.Builder
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for i := range header {
		if align[i] {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Nanos formats a duration in nanoseconds with three significant digits and
// a unit: 4.7 ns, 183 ns, 12.4 µs, 3.1 ms.
func Nanos(ns float64) string {
	switch {
	case ns < 1e3:
		return sig3(ns) + " ns"
	case ns < 1e6:
		return sig3(ns/1e3) + " µs"
	case ns < 1e9:
		return sig3(ns/1e6) + " ms"
	default:
		return sig3(ns/1e9) + " s"
	}
}

func sig3(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}
