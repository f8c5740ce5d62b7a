package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sampleOutput = `# machine: test
goos: linux
pkg: github.com/shardedsink/shardedsink/sink
BenchmarkContended/consumers=held/payload=8/impl=Handle.Push/producers=1-2         	 2000000	        10.0 ns/op	        8.00 cpu-ns/op	         0 drop-%	       0 B/op	       0 allocs/op
BenchmarkContended/consumers=held/payload=8/impl=Handle.Push/producers=1-2         	 2000000	        10.0 ns/op	       10.00 cpu-ns/op	         0 drop-%	       0 B/op	       0 allocs/op
BenchmarkContended/consumers=held/payload=8/impl=Handle.Push/producers=1-2         	 2000000	        10.0 ns/op	       12.00 cpu-ns/op	         0 drop-%	       0 B/op	       0 allocs/op
BenchmarkContended/consumers=held/payload=8/impl=Handle.Push/producers=4-2         	 2000000	        10.0 ns/op	       20.00 cpu-ns/op	         0 drop-%	       0 B/op	       0 allocs/op
BenchmarkContended/consumers=held/payload=8/impl=Sink.Push/producers=1-2           	 2000000	        10.0 ns/op	       15.00 cpu-ns/op	         0 drop-%	       0 B/op	       0 allocs/op
BenchmarkContended/consumers=held/payload=8/impl=Sink.Push/producers=4-2           	 2000000	        10.0 ns/op	       30.00 cpu-ns/op	         0 drop-%	       0 B/op	       0 allocs/op
pkg: github.com/shardedsink/shardedsink/bench/usercost
BenchmarkHandlePush-2   	 1000	         9.00 ns/op	       0 B/op	       0 allocs/op
pkg: github.com/shardedsink/shardedsink/bench/usercost/withatomic
BenchmarkHandlePush-2   	 1000	         6.00 ns/op	       0 B/op	       0 allocs/op
`

func TestRenderGivesMediansRangesAndRatios(t *testing.T) {
	path := filepath.Join(t.TempDir(), "raw.txt")
	if err := os.WriteFile(path, []byte(sampleOutput), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := run([]string{"-from", path}, &out, &errOut); err != nil {
		t.Fatal(err, errOut.String())
	}
	got := out.String()
	for _, want := range []string{
		"| held, 8 B, Handle.Push | 10.0 (8.00-12.0) | 20.0 (20.0-20.0) |",
		"| held, 8 B, Sink.Push | 15.0 (15.0-15.0) | 30.0 (30.0-30.0) |",
		"| held, 8 B, Sink.Push / Handle.Push | 1.50x | 1.50x |",
		"| held, 8 B, Handle.Push, against 1 producer | 1.00x | 2.00x |",
		"| HandlePush | 9.00 (9.00-9.00) | 6.00 (6.00-6.00) | 1.50x |",
		"machine: test  \n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func TestHelpExitsCleanlyAndBadFlagsFail(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run([]string{"-h"}, &out, &errOut); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	if err := run([]string{"-count", "0"}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "-count") {
		t.Fatalf("-count 0: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.txt")
	if err := os.WriteFile(empty, []byte("nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"-from", empty}, &out, &errOut); err == nil {
		t.Fatal("an output without results rendered")
	}
}
