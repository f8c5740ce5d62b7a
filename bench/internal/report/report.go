// Package report holds what the bench commands share: the description of the
// machine and the run a table was measured on, the output formats, the
// percentile and median rules, the writers for markdown tables, JSON and
// benchfmt lines, the per-row watchdog, and output files written as rows
// finish.
package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
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
	// Kernel is the kernel release (/proc/sys/kernel/osrelease), "unknown"
	// where there is none.
	Kernel string `json:"kernel"`
	// THP is the transparent huge pages setting, the bracketed word of
	// /sys/kernel/mm/transparent_hugepage/enabled (always, madvise or never),
	// "unknown" where there is none.
	THP string `json:"transparent_hugepages"`
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
		Kernel:     firstLine("/proc/sys/kernel/osrelease"),
		THP:        thpSetting(firstLine("/sys/kernel/mm/transparent_hugepage/enabled")),
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

// firstLine returns the first line of a file, trimmed, or "unknown".
func firstLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if line = strings.TrimSpace(line); line == "" {
		return "unknown"
	}
	return line
}

// thpSetting picks the selected word, the one in brackets, out of
// "always [madvise] never".
func thpSetting(s string) string {
	if i := strings.IndexByte(s, '['); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j > 0 {
			return s[i+1 : i+j]
		}
	}
	return s
}

// Run describes one run of a bench command: the machine, the load on it
// before and after, the runtime settings that move the numbers, and every
// flag with the value it had.
type Run struct {
	Machine Machine `json:"machine"`
	// Command is the command line, as a reader would type it.
	Command string `json:"command"`
	// LoadBefore and LoadAfter are /proc/loadavg's 1, 5 and 15 minute
	// averages when the run started and when it ended (nil where there is
	// no /proc/loadavg). A producer on a locked thread counts as load, so
	// LoadAfter includes the run's own threads.
	LoadBefore []float64 `json:"load_before"`
	LoadAfter  []float64 `json:"load_after"`
	// GOGC and GOMAXPROCS are the environment variables as set ("" when
	// unset: the defaults, 100 and the number of cores).
	GOGC       string `json:"gogc"`
	GOMAXPROCS string `json:"gomaxprocs_env"`
	// Flags holds every flag of the command, set or defaulted.
	Flags map[string]string `json:"flags"`
}

// StartRun describes a run that starts now: the machine, the load average,
// the environment and the flags of fs, which must have been parsed.
func StartRun(command string, flags map[string]string) Run {
	return Run{
		Machine:    ReadMachine(),
		Command:    command,
		LoadBefore: LoadAverage(),
		GOGC:       os.Getenv("GOGC"),
		GOMAXPROCS: os.Getenv("GOMAXPROCS"),
		Flags:      flags,
	}
}

// Finish records the load average at the end of the run.
func (r *Run) Finish() { r.LoadAfter = LoadAverage() }

// LoadAverage returns the 1, 5 and 15 minute load averages from
// /proc/loadavg, or nil where there is none.
func LoadAverage() []float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return nil
	}
	out := make([]float64, 3)
	for i := range out {
		if _, err := fmt.Sscan(f[i], &out[i]); err != nil {
			return nil
		}
	}
	return out
}

// FormatLoad writes load averages as "0.12 0.34 0.56", or "unknown".
func FormatLoad(l []float64) string {
	if len(l) == 0 {
		return "unknown"
	}
	s := make([]string, len(l))
	for i, v := range l {
		s[i] = fmt.Sprintf("%.2f", v)
	}
	return strings.Join(s, " ")
}

// Format is an output format of the bench commands.
type Format string

// The formats: a markdown table for people, JSON for machines, an SVG chart
// where a command draws one, benchfmt lines for benchstat, the generated
// documentation section where a command renders one, the front page's
// headline table, and the table of a run on a many-core machine.
const (
	Markdown Format = "markdown"
	JSON     Format = "json"
	SVG      Format = "svg"
	Benchfmt Format = "benchfmt"
	Readme   Format = "readme"
	Headline Format = "headline"
	Summary  Format = "summary"
	ManyCore Format = "manycore"
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
// a unit: 4.70 ns, 183 ns, 12.4 µs, 3.10 ms. It rounds to three significant
// digits first and picks the unit for the rounded value, so that 99.96 ms
// reads "100 ms" and 999.7 ns reads "1.00 µs".
func Nanos(ns float64) string {
	if math.IsNaN(ns) || math.IsInf(ns, 0) {
		return "-"
	}
	r := RoundSig(ns, 3)
	switch a := math.Abs(r); {
	case a < 1e3:
		return Sig3(r) + " ns"
	case a < 1e6:
		return Sig3(r/1e3) + " µs"
	case a < 1e9:
		return Sig3(r/1e6) + " ms"
	default:
		return Sig3(r/1e9) + " s"
	}
}

// RoundSig rounds x to digits significant digits.
func RoundSig(x float64, digits int) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	scale := math.Pow(10, float64(digits)-math.Ceil(math.Log10(math.Abs(x))))
	r := math.Round(x*scale) / scale
	return r
}

// Sig3 formats x with three significant digits and no exponent: 4.70, 18.3,
// 183, 1830. It rounds first and picks the number of decimals for the
// rounded value, so 99.96 reads "100", not "100.0".
func Sig3(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	r := RoundSig(x, 3)
	switch a := math.Abs(r); {
	case a >= 100:
		return fmt.Sprintf("%.0f", r)
	case a >= 10:
		return fmt.Sprintf("%.1f", r)
	default:
		return fmt.Sprintf("%.2f", r)
	}
}

// WriteFile writes data to path through a temporary file in the same
// folder and a rename, so that a reader (or a run killed half way) never
// sees a half-written file.
func WriteFile(path string, data []byte) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
