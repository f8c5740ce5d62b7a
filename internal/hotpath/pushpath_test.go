package hotpath

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// update rewrites testdata/push.golden from the probe's listing:
//
//	go test ./internal/hotpath/ -run TestPushPathsAreUnchanged -update
var update = flag.Bool("update", false, "rewrite testdata/push.golden from the probe's listing")

// pushPaths are the push functions whose every instruction the golden file
// holds: the code a push runs when the sink has no byte budget. A byte
// budget (Config.MaxQueuedBytes) sits in front of the ring, behind the
// ring's interface, so these functions are the same whether a sink has one
// or not; the golden file proves that adding the budget added nothing to
// them, and that no later change adds an instruction unnoticed.
var pushPaths = []string{
	`sink\.\(\*Handle\[go\.shape\..*\]\)\.Push`,
	`sink\.\(\*Sink\[go\.shape\..*\]\)\.Push`,
}

const goldenFile = "testdata/push.golden"

// number matches the numbers of an instruction (offsets, constants, jump
// targets): a field added to a struct moves offsets without changing what
// the code does.
var number = regexp.MustCompile(`-?\b(0x[0-9a-f]+|[0-9]+)\b`)

// normalise returns an instruction as the golden file holds it: numbers as
// N, shapes as T.
func normalise(text string) string {
	text = strings.ReplaceAll(text, modulePrefix, "")
	text = shape.ReplaceAllString(text, "[T]")
	return number.ReplaceAllString(text, "N")
}

var shape = regexp.MustCompile(`\[go\.shape\.[^\]]*\]`)

// TestPushPathsAreUnchanged compares the instructions of Handle.Push and
// Sink.Push with testdata/push.golden, and checks that none of them comes
// from sink/budget.go: a sink without a byte budget runs exactly the code
// that the golden file holds (recorded from the push as it was before the
// byte budget, but for the slow path's callee, refused instead of
// forcePush: see the commit that added it), and the budget costs it not
// one instruction.
func TestPushPathsAreUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: builds a program with the go command")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the go command is not available (%v): cannot build the probe", err)
	}
	l := probeListing(t, goCmd)
	header := fmt.Sprintf("# %s GOARCH=amd64 GOAMD64=v1: the instructions of the push paths, numbers as N (go test -run TestPushPathsAreUnchanged -update rewrites it)\n", runtime.Version())
	var got strings.Builder
	got.WriteString(header)
	for _, pat := range pushPaths {
		re := anchored([]string{pat})
		var found []string
		for fn := range l.code {
			if re.MatchString(fn) {
				found = append(found, fn)
			}
		}
		if len(found) != 1 {
			t.Fatalf("%d functions match %s in the probe's listing, want 1: %q", len(found), pat, found)
		}
		fn := found[0]
		fmt.Fprintf(&got, "== %s (%d instructions)\n", normalise(fn), len(l.code[fn]))
		for _, in := range l.code[fn] {
			if strings.HasPrefix(in.pos, "budget.go:") {
				t.Errorf("%s holds an instruction from sink/budget.go (%s: %s): the byte budget must stay behind the ring's interface, off the push path of a sink without one", fn, in.pos, in.text)
			}
			got.WriteString(normalise(in.text) + "\n")
		}
	}
	if *update {
		if err := os.WriteFile(filepath.FromSlash(goldenFile), []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(filepath.FromSlash(goldenFile))
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(want), "\n"); first+"\n" != header {
		t.Skipf("%s was recorded with another toolchain (%q): rerun with -update after checking the change of the listing by hand", goldenFile, first)
	}
	if got.String() != string(want) {
		t.Errorf("the push paths differ from %s: a change added or removed instructions on Handle.Push or Sink.Push; if it is meant, rerun with -update and say why in the commit\n%s",
			goldenFile, lineDiff(string(want), got.String()))
	}
}

// lineDiff returns the first lines where a and b differ, with a few lines
// of context.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n\twant %q\n\tgot  %q", i+1, x, y)
		}
	}
	return ""
}
