package commandtest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	Main(m, "echoer", func() {
		fmt.Println(strings.Join(os.Args, " "))
		if len(os.Args) > 1 && os.Args[1] == "fail" {
			os.Exit(3)
		}
	})
}

func TestRunPassesArgumentsAndExitCodes(t *testing.T) {
	code, out := Run(t, "echoer", "-a 1 b")
	if code != 0 || !strings.Contains(out, "echoer -a 1 b") {
		t.Fatalf("exit %d, output %q; want 0 and the command line", code, out)
	}
	code, out = Run(t, "echoer", "fail")
	if code != 3 {
		t.Fatalf("exit %d, output %q; want 3", code, out)
	}
}

func TestMarkdownWithFindsTheMarkerAtAnyDepth(t *testing.T) {
	root := t.TempDir()
	for path, text := range map[string]string{
		"README.md":           "no marker here\n",
		"docs/benchmarks.md":  "prose\n<!-- x:begin -->\ntable\n<!-- x:end -->\n",
		"a/b/c/notes.md":      "<!-- x:begin -->",
		"docs/benchmarks.txt": "<!-- x:begin -->",
		".git/HEAD.md":        "<!-- x:begin -->",
	} {
		p := filepath.Join(root, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := MarkdownWith(t, root, "<!-- x:begin")
	want := []string{filepath.Join(root, "a", "b", "c", "notes.md"), filepath.Join(root, "docs", "benchmarks.md")}
	if !slices.Equal(got, want) {
		t.Errorf("MarkdownWith = %q, want %q", got, want)
	}
}
