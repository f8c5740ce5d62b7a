package logprobe

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTheHistogramBoundsItsQuantiles(t *testing.T) {
	var h hist
	for d := int64(1); d <= 100000; d++ {
		h.add(d)
	}
	for _, q := range []float64{0.5, 0.99} {
		exact := q * 100000
		got := float64(h.quantile(q))
		if got < exact || got > exact*17/16+1 {
			t.Errorf("quantile(%v) = %v, want within 1/16 above %v", q, got, exact)
		}
	}
	if h.quantile(1) != 100000 || h.max != 100000 {
		t.Errorf("max = %d, quantile(1) = %d", h.max, h.quantile(1))
	}
	for k := 16; k < 50*16; k++ { // up to 2^53 ns: beyond any call
		if bucket(upper(k)-1) != k {
			t.Fatalf("bucket(upper(%d)-1) = %d", k, bucket(upper(k)-1))
		}
	}
}

// A logger that writes each line straight into the pipe blocks for the
// stall: the probe sees it in Max, and every record reaches the reader.
func TestStalledSeesABlockingLogger(t *testing.T) {
	open := func(w io.Writer) Logger {
		return Logger{Log: func(i int, keep bool) {
			msg := "x\n"
			if keep {
				msg = KeepMark + "\n"
			}
			_, _ = io.WriteString(w, msg)
		}}
	}
	res, err := Stalled(open, 4, 200*time.Millisecond, 100*time.Millisecond, 10, func([]byte) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if res.Reached != res.Calls || res.KeptLost != 0 || res.Kept == 0 {
		t.Fatalf("%+v: every record should reach the reader", res)
	}
	if res.Max < 50*time.Millisecond {
		t.Fatalf("max call %v: the pipe's stall did not show", res.Max)
	}
}

func TestHealthyCountsTheLines(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	open := func(w io.Writer) Logger {
		return Logger{Log: func(int, bool) { _, _ = io.WriteString(w, "line\n") }}
	}
	res, err := Healthy(open, f, 2, 20*time.Millisecond, func([]byte) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if res.Calls == 0 || res.Reached != res.Calls {
		t.Fatalf("%+v", res)
	}
}

func TestTableRendersEveryRowAndRefusesAMissingOne(t *testing.T) {
	raw := []byte(`# go1.26 linux/amd64, header
cpu: test
BenchmarkStalledPipe/logger=a-2 1 1 ns/op 100 calls 50 %reached 1000 p99-call-ns 2000000 max-call-ns 3 kept-calls 1 kept-lost 0 unaccounted
BenchmarkStalledPipe/logger=a-spill-2 1 1 ns/op 200 calls 100 %reached 1000 p99-call-ns 9000000 max-call-ns 3 kept-calls 0 kept-lost 0 unaccounted
BenchmarkFile/logger=a/goroutines=1-2 1 1 ns/op 1000000 calls/s 1000000 written/s 100 %reached 900 p99-call-ns 5000 max-call-ns
BenchmarkFile/logger=a/goroutines=16-2 1 1 ns/op 1500000 calls/s 1500000 written/s 100 %reached 900 p99-call-ns 5000 max-call-ns
BenchmarkFile/logger=a/goroutines=64-2 1 1 ns/op 1500000 calls/s 1200000 written/s 80 %reached 900 p99-call-ns 5000 max-call-ns 330 core-rt-ns
BenchmarkFile/logger=a/goroutines=64-2 1 1 ns/op 1500000 calls/s 1200000 written/s 80 %reached 900 p99-call-ns 5000 max-call-ns 55 core-rt-ns
BenchmarkFile/logger=a/goroutines=256-2 1 1 ns/op 1500000 calls/s 1500000 written/s 100 %reached 900 p99-call-ns 5000 max-call-ns
BenchmarkBusy/logger=a-2 1 1 ns/op 80000 calls/s 80000 written/s 0 lost 900 p99-call-ns 5000 max-call-ns 61 core-rt-ns
BenchmarkOffered/logger=a-2 1 1 ns/op 180000 offered/s 175000 calls/s 170000 written/s 12 lost 900 p99-call-ns 5000 max-call-ns
BenchmarkDiscard/logger=a-2 100 250 ns/op 0 B/op 2 allocs/op
BenchmarkIdle/logger=a-2 1 1 ns/op 0.05 %core-idle
# end load
`)
	out, err := Table(raw, "bash x.sh", []string{"a"}, []string{"a-spill"}, []string{"a"}, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| a | 1 | 0.100 k | 0.0500 k | 50.0 % | 1.00 µs | 2.00 ms | 1 / 3 | 0 |", "| a-spill | 1 | 0.200 k | 0.200 k | 100 % | 1.00 µs | 9.00 ms | 0 / 3 | 0 |", "| a | 64 | 2 | 1.50 M | 1.20 M | 80.0 % | 900 ns | 5.00 µs | 55.0–330 ns |",
		"| a | 1 | 1 | 1.00 M | 1.00 M | 100 % | 900 ns | 5.00 µs | – |",
		"| a | 1 | 80.0 k | 80.0 k | 0 | 900 ns | 5.00 µs | 61.0 ns |", "| a | 1 | 180 k | 175 k | 170 k | 12 | 900 ns | 5.00 µs | – |", "| a | 1 | 250 ns | 2 | 1.00x |", "| a | 1 | 0.0500 % |"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if _, err := Table(raw, "bash x.sh", []string{"a", "b"}, nil, nil, nil); err == nil {
		t.Error("a logger with no run rendered without an error")
	}
	if _, err := Table(raw, "bash x.sh", []string{"a"}, []string{"b"}, nil, nil); err == nil {
		t.Error("a stalled-pipe logger with no run rendered without an error")
	}
}

// TestCountLinesAcrossChunks counts the lines of a file several times
// countChunk long: lines that straddle the chunks' edges, one longer than
// a chunk, drop reports left out, and a last line without its newline.
func TestCountLinesAcrossChunks(t *testing.T) {
	var b bytes.Buffer
	want := uint64(0)
	for i := 0; b.Len() < 3*countChunk; i++ {
		if i%97 == 0 {
			b.WriteString("REPORT dropped\n")
			continue
		}
		b.WriteString(strings.Repeat("x", i%300))
		b.WriteString("y\n")
		want++
		if i == 5000 {
			b.WriteString(strings.Repeat("z", countChunk+countChunk/2))
			b.WriteString("\n\n") // and an empty line, not counted
			want++
		}
	}
	b.WriteString("last")
	want++
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := countLines(path, func(line []byte) bool { return bytes.HasPrefix(line, []byte("REPORT")) })
	if err != nil || got != want {
		t.Fatalf("countLines = %d, %v; want %d, nil", got, err, want)
	}
}
