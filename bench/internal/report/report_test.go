package report

import (
	"bytes"
	"encoding/json"
	"testing"

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

func TestMachineMarshalsWithSnakeCaseKeys(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, ReadMachine()))
	var m map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &m))
	for _, k := range []string{"cpu", "cores", "gomaxprocs", "go_version", "os", "arch"} {
		require.Contains(t, m, k)
	}
	require.Positive(t, m["cores"])
}
