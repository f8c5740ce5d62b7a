package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// snippetDocuments are the markdown files, relative to the repository root,
// whose go blocks TestEveryGoSnippetCompiles builds: the front page and the
// READMEs it links for the modules that have no other.
var snippetDocuments = []string{"README.md", "natssink/README.md"}

// snippet is one go block of a markdown file.
type snippet struct {
	file string // relative to the repository root
	line int    // of its first line of code
	code string
}

// goSnippets returns the go blocks of the markdown file at root/file.
func goSnippets(t *testing.T, root, file string) []snippet {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, file))
	require.NoError(t, err)
	var out []snippet
	var cur *snippet
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && line == "```go":
			cur = &snippet{file: file, line: n + 1}
		case cur != nil && line == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.code += line + "\n"
		}
	}
	require.NoError(t, sc.Err())
	require.Nil(t, cur, "%s: a go block is not closed", file)
	return out
}

// programImports are the packages of README.md's complete program
// (main.go), by name: a fragment continues that program, so it may use
// them without importing them.
var programImports = map[string]string{
	"context": "context",
	"fmt":     "fmt",
	"sync":    "sync",
	"atomic":  "sync/atomic",
	"sink":    "github.com/shardedsink/shardedsink/sink",
}

// harness is the package that every fragment of a document is compiled
// in. It declares the names a fragment may use without declaring them:
// those of README.md's complete program (Event and action, as main.go
// declares them) and the placeholders of the channel's snippet (ctx, wg,
// Job, jobs, handle). Any other name must be declared or imported by the
// fragment itself, as a reader would have to.
const harness = `package main

import (
	"context"
	"sync"

	"github.com/shardedsink/shardedsink/sink"
)

type Event struct{ Status int }

type Job struct{ ID int }

var (
	action sink.ActionFunc[Event]
	ctx    = context.Background()
	wg     sync.WaitGroup
	jobs   []Job
)

func handle(Job) {}

func main() {}
`

// fragmentFile renders a go block that is not a complete file as a file
// of the harness's package: its leading import lines become the file's
// imports, with those of programImports that it uses, and the rest the
// body of a function of its own, followed by a blank assignment of each
// variable it declares, so that a fragment need not use what it shows.
// Line directives make the compiler's errors point into the markdown file.
func fragmentFile(t *testing.T, s snippet, fn string) string {
	t.Helper()
	lines := strings.SplitAfter(s.code, "\n")
	var imports []string
	k := 0
	for ; k < len(lines); k++ {
		l := strings.TrimSpace(lines[k])
		if l == "" || strings.HasPrefix(l, "import ") {
			if l != "" {
				imports = append(imports, strings.TrimSpace(strings.SplitN(strings.TrimPrefix(l, "import "), "//", 2)[0]))
			}
			continue
		}
		break
	}
	body := strings.Join(lines[k:], "")

	// Parse the body to find what it uses and declares.
	f, err := parser.ParseFile(token.NewFileSet(), s.file, "package p\nfunc _() {\n"+body+"\n}\n", parser.SkipObjectResolution)
	require.NoError(t, err, "%s:%d: the go block is not a file nor statements", s.file, s.line)
	used, declared := map[string]bool{}, []string{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	for _, st := range f.Decls[0].(*ast.FuncDecl).Body.List {
		if as, ok := st.(*ast.AssignStmt); ok && as.Tok == token.DEFINE {
			for _, e := range as.Lhs {
				if id, ok := e.(*ast.Ident); ok && id.Name != "_" {
					declared = append(declared, id.Name)
				}
			}
		}
	}
	for name, path := range programImports {
		if used[name] && !slices.ContainsFunc(imports, func(i string) bool { return strings.HasSuffix(i, "/"+name+`"`) || i == `"`+name+`"` }) {
			imports = append(imports, fmt.Sprintf("%q", path))
		}
	}
	slices.Sort(imports)

	var b strings.Builder
	b.WriteString("package main\n\n")
	for _, i := range imports {
		fmt.Fprintf(&b, "import %s\n", i)
	}
	fmt.Fprintf(&b, "\nfunc %s() {\n//line %s:%d\n%s\n", fn, s.file, s.line+k, body)
	for _, d := range declared {
		fmt.Fprintf(&b, "\t_ = %s\n", d)
	}
	b.WriteString("}\n")
	return b.String()
}

// TestEveryGoSnippetCompiles builds every go block of snippetDocuments, in
// a module of its own that a go.work joins to the repository's modules
// (no network: GOPROXY=off). A block that starts with a package clause is
// a program of its own; any other is a fragment, compiled in the harness
// (see harness and fragmentFile for what it may leave undeclared).
func TestEveryGoSnippetCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}

	// The workspace: this module and every module of the repository's go.work.
	cmd := exec.Command("go", "work", "edit", "-json", filepath.Join(root, "go.work"))
	out, err := cmd.Output()
	require.NoError(t, err, "go work edit -json")
	var work struct {
		Go  string
		Use []struct{ DiskPath string }
	}
	require.NoError(t, json.Unmarshal(out, &work))
	var gowork strings.Builder
	fmt.Fprintf(&gowork, "go %s\n\nuse (\n\t.\n", work.Go)
	for _, u := range work.Use {
		fmt.Fprintf(&gowork, "\t%s\n", filepath.Join(root, u.DiskPath))
	}
	gowork.WriteString(")\n")
	write("go.work", gowork.String())
	write("go.mod", "module example.com/snippets\n\ngo "+work.Go+"\n")
	if sum, err := os.ReadFile(filepath.Join(root, "go.work.sum")); err == nil {
		write("go.work.sum", string(sum))
	}

	var count int
	for d, doc := range snippetDocuments {
		fragments := 0
		for i, s := range goSnippets(t, root, doc) {
			count++
			pkg := fmt.Sprintf("doc%d", d)
			if strings.HasPrefix(s.code, "package ") {
				write(fmt.Sprintf("%s_program%d/main.go", pkg, i), fmt.Sprintf("//line %s:%d\n%s", s.file, s.line, s.code))
				continue
			}
			if fragments == 0 {
				write(pkg+"/harness.go", harness)
			}
			fragments++
			write(fmt.Sprintf("%s/fragment%d.go", pkg, i), fragmentFile(t, s, fmt.Sprintf("fragment%d", i)))
		}
	}
	require.Positive(t, count, "no go block in %v", snippetDocuments)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "./...")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOWORK="+filepath.Join(dir, "go.work"), "GOPROXY=off", "GOFLAGS=-buildvcs=false")
	out, err = build.CombinedOutput()
	require.NoError(t, err, "a go block of %v does not compile:\n%s", snippetDocuments, out)
}
