package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestMedianOfOddAndEvenCountsWithoutReordering(t *testing.T) {
	xs := []float64{5, 1, 3}
	require.Equal(t, 3.0, Median(xs))
	require.Equal(t, []float64{5, 1, 3}, xs, "Median must not sort its argument")
	require.Equal(t, 2.5, Median([]float64{4, 1, 3, 2}))
	require.Equal(t, 0.0, Median(nil))
}

func TestPercentileClampsAndHandlesEmpty(t *testing.T) {
	require.Equal(t, int64(0), Percentile([]int64(nil), 0.99))
	require.Equal(t, 7.0, Percentile([]float64{7}, 0.999))
	require.Equal(t, int64(3), Percentile([]int64{1, 2, 3}, 2), "p above 1 clamps to the maximum")
	require.Equal(t, int64(1), Percentile([]int64{1, 2, 3}, -1), "p below 0 clamps to the minimum")
	require.Equal(t, int64(3), Percentile([]int64{1, 2, 3, 4}, 0.5), "round(1.5) = 2, half away from zero")
}

func TestParseFormatAcceptsOnlyTheSupportedFormats(t *testing.T) {
	f, err := ParseFormat("json", Markdown, JSON)
	require.NoError(t, err)
	require.Equal(t, JSON, f)
	_, err = ParseFormat("svg", Markdown, JSON)
	require.ErrorContains(t, err, `-format: unknown format "svg" (want one of markdown, json)`)
}

func TestWriteTableAlignsNumbersRight(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteTable(&b, []string{"impl", "ns"}, nil, [][]string{{"vyukov", "12.8"}}))
	require.Equal(t, "| impl | ns |\n|---|---:|\n| vyukov | 12.8 |\n", b.String())
}

func TestNanosPicksTheUnitAndThreeDigits(t *testing.T) {
	for ns, want := range map[float64]string{4.7: "4.70 ns", 183: "183 ns", 12400: "12.4 µs", 3.1e6: "3.10 ms", 2e9: "2.00 s"} {
		require.Equal(t, want, Nanos(ns))
	}
}

func TestNanosRoundsBeforeItPicksTheUnit(t *testing.T) {
	for ns, want := range map[float64]string{
		99.96e6:  "100 ms",  // not "100.0 ms": 99.96 rounds to 100, which takes no decimals
		999.7:    "1.00 µs", // not "1000 ns"
		999.4:    "999 ns",
		9.996:    "10.0 ns", // not "10.00 ns"
		99.94e3:  "99.9 µs",
		999.96e6: "1.00 s",
		0:        "0.00 ns",
	} {
		require.Equal(t, want, Nanos(ns), "%v ns", ns)
	}
}

func TestSig3RoundsFirst(t *testing.T) {
	for x, want := range map[float64]string{99.96: "100", 9.996: "10.0", 0.12345: "0.12", 1234.5: "1230", 18.34: "18.3"} {
		require.Equal(t, want, Sig3(x), "%v", x)
	}
}

func TestTHPSettingPicksTheBracketedWord(t *testing.T) {
	require.Equal(t, "madvise", thpSetting("always [madvise] never"))
	require.Equal(t, "never", thpSetting("always madvise [never]"))
	require.Equal(t, "unknown", thpSetting("unknown"))
}

func TestBenchLines(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteBenchLine(&b, "BenchmarkX/"+BenchKey("impl", "a b/c=d"), 1200,
		Metric{21.25, "cpu-ns/op"}, Metric{math.NaN(), "left-out"}, Metric{3.2e7, "pushes/s"}))
	require.Equal(t, "BenchmarkX/impl=a_b_c_d 1200 21.25 cpu-ns/op 3.2e+07 pushes/s\n", b.String())
	require.Error(t, WriteBenchLine(&b, "NotABenchmark", 1))
	require.Error(t, WriteBenchLine(&b, "BenchmarkX", 1, Metric{1, "two words"}))

	b.Reset()
	run := Run{Machine: Machine{OS: "linux", Arch: "amd64", CPU: "EPYC", GoVersion: "go1.26.8", GOMAXPROCS: 2}, LoadBefore: []float64{0.5, 0.25, 0}}
	require.NoError(t, WriteBenchHeader(&b, "example.com/p", run))
	require.Equal(t, "goos: linux\ngoarch: amd64\npkg: example.com/p\ncpu: EPYC\ngo: go1.26.8\ngomaxprocs: 2\nload-before: 0.50 0.25 0.00\n", b.String())
}

func TestWatchdogFiresOnlyForAHungRow(t *testing.T) {
	var out bytes.Buffer
	exited := make(chan int, 1)
	w := &Watchdog{Limit: 20 * time.Millisecond, Out: &out, Exit: func(code int) { exited <- code }}

	require.NoError(t, w.Do("quick row", func() error { return nil }))
	want := errors.New("row failed")
	require.ErrorIs(t, w.Do("failing row", func() error { return want }), want)

	release := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- w.Do("hung row", func() error { <-release; return nil }) }()
	require.Equal(t, HungExitCode, <-exited)
	close(release)
	require.NoError(t, <-done)
	require.Contains(t, out.String(), "WATCHDOG: hung row did not finish within 20ms")
	require.Contains(t, out.String(), "goroutine ")
	require.NotContains(t, out.String(), "quick row")

	var off *Watchdog
	require.NoError(t, off.Do("no watchdog", func() error { return nil }))
}

func TestWriteFileReplacesTheFileWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.json")
	require.NoError(t, WriteFile(path, []byte("first, longer content")))
	require.NoError(t, WriteFile(path, []byte("second")))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "second", string(got))
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")
	require.Error(t, WriteFile(filepath.Join(path, "not-a-dir", "x"), nil))
}

func TestLoadAverageAndRun(t *testing.T) {
	if _, err := os.Stat("/proc/loadavg"); err != nil {
		t.Skip("no /proc/loadavg")
	}
	l := LoadAverage()
	require.Len(t, l, 3)
	run := StartRun("cmd", map[string]string{"a": "1"})
	require.Len(t, run.LoadBefore, 3)
	require.Nil(t, run.LoadAfter)
	run.Finish()
	require.Len(t, run.LoadAfter, 3)
	require.Equal(t, "unknown", FormatLoad(nil))
	require.Equal(t, "1.00 2.50", FormatLoad([]float64{1, 2.5}))
}

func TestMachineMarshalsWithSnakeCaseKeys(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, ReadMachine()))
	var m map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &m))
	for _, k := range []string{"cpu", "cores", "gomaxprocs", "go_version", "os", "arch", "kernel", "transparent_hugepages"} {
		require.Contains(t, m, k)
	}
	require.Positive(t, m["cores"])
}

func TestFromPathsKeepsListOrderSortsEachGlobAndRefusesAGlobOfNothing(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b-2.json", "b-1.json", "a.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := FromPaths(filepath.Join(dir, "b-*.json") + ", " + filepath.Join(dir, "a.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "b-1.json"), filepath.Join(dir, "b-2.json"), filepath.Join(dir, "a.json")}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if _, err := FromPaths(filepath.Join(dir, "c-*.json")); err == nil {
		t.Fatal("a glob that matches nothing gave no error")
	}
	if _, err := FromPaths(" , "); err == nil {
		t.Fatal("an empty list gave no error")
	}
}

func TestWrapBreaksAtSpacesOutsideCodeAndBlockMarkers(t *testing.T) {
	require.Equal(t, "one two\n  three\n  four", Wrap("one two three four", 9, "  "))
	require.Equal(t, "a\n`b c d`\ne", Wrap("a `b c d` e", 5, ""), "a code span stays whole")
	require.Equal(t, "a bb -\nc", Wrap("a bb - c", 4, ""), "no line starts with a list marker")
	require.Equal(t, "a 12.\nx", Wrap("a 12. x", 3, ""), "nor with an ordered one")
	require.Equal(t, "averylongword\nb", Wrap("averylongword b", 4, ""))
	require.Equal(t, "short", Wrap("short", 200, "  "))
	require.Equal(t, "a\n12 %", Wrap("a 12 %", 4, ""), "a percent sign stays by its number")
}
