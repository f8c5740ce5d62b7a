package benchtxt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const raw = `# go1.26 linux/amd64, 2026-12-01, load average 1.0 before
goos: linux
cpu: Some CPU   
BenchmarkA/impl=x-2   	 100	  10.0 ns/op	 3 allocs/op
BenchmarkA/impl=x-2   	 100	  30.0 ns/op	 3 allocs/op
BenchmarkA/impl=x-2   	 100	  20.0 ns/op	 5 allocs/op
BenchmarkA/impl=x-2 a log line that is not a result
BenchmarkB-16   	 1	  7 widgets/s
# end load average 2.0
`

func TestParseReadsEveryMetricAndTheFramingLines(t *testing.T) {
	r, err := Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if r.Header != "go1.26 linux/amd64, 2026-12-01, load average 1.0 before" || r.End != "load average 2.0" || r.CPU != "Some CPU" {
		t.Fatalf("header %q, end %q, cpu %q", r.Header, r.End, r.CPU)
	}
	a := r.Values["BenchmarkA/impl=x"]
	if got := a["ns/op"]; len(got) != 3 || got[0] != 10 || got[1] != 30 || got[2] != 20 {
		t.Fatalf("ns/op %v", got)
	}
	if got := r.Values["BenchmarkB"]["widgets/s"]; len(got) != 1 || got[0] != 7 {
		t.Fatalf("BenchmarkB without its -16: %v", r.Values)
	}
	if m := Median(a["ns/op"]); m != 20 {
		t.Fatalf("median %v", m)
	}
	if m := Median(a["allocs/op"]); m != 3 {
		t.Fatalf("median %v", m)
	}
	if m := Median([]float64{1, 4}); m != 2.5 {
		t.Fatalf("median of two %v", m)
	}
	if s := Spread(a["ns/op"], 0.1, 1, " µs"); s != "2.0 (1.0-3.0) µs" {
		t.Fatalf("spread %q", s)
	}
}

func TestParseRefusesAnOutputWithoutItsFramingOrWithABadValue(t *testing.T) {
	if _, err := Parse([]byte(strings.Replace(raw, "# end load average 2.0\n", "", 1))); err == nil {
		t.Fatal("no end line, no error")
	}
	if _, err := Parse([]byte(strings.Replace(raw, "7 widgets/s", "x widgets/s", 1))); err == nil {
		t.Fatal("a value that is not a number, no error")
	}
}

func TestSyncBlockComparesAndRewritesOnlyTheBlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	doc := "before\n<!-- t:begin: generated; do not edit -->\nold\n<!-- t:end -->\nafter\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SyncBlock(path, "t", "old\n", false); err != nil {
		t.Fatalf("the same block: %v", err)
	}
	if err := SyncBlock(path, "t", "new\n", false); err == nil || !strings.Contains(err.Error(), "-update") {
		t.Fatalf("a different block: %v", err)
	}
	if err := SyncBlock(path, "t", "new\n", true); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := strings.Replace(doc, "old\n", "new\n", 1); string(got) != want {
		t.Fatalf("rewritten:\n%s", got)
	}
	if err := SyncBlock(path, "other", "x", true); err == nil {
		t.Fatal("no such markers, no error")
	}
}
