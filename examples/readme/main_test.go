package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

// TestTheReadmeShowsThisProgramAndItsOutput fails when README.md's complete
// program is not this file (from its package clause on) or its output block
// is not what the program prints.
func TestTheReadmeShowsThisProgramAndItsOutput(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	program := string(src[bytes.Index(src, []byte("package main")):])
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```go\n"+program+"```\n") {
		t.Errorf("README.md does not show examples/readme/main.go from its package clause on; copy it into the README's go block:\n%s", program)
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	main()
	os.Stdout = stdout
	w.Close()
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := "drained 8000, dropped 0, queued 0\n"; string(out) != want {
		t.Errorf("the program printed %q, want %q", out, want)
	}
	if !strings.Contains(string(readme), "```\n"+string(out)+"```\n") {
		t.Errorf("README.md does not show the program's output %q in a plain code block", out)
	}
}
