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
	"maps"
	"os"
	"os/exec"
	"path"
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

// leadingImports splits a go block into its leading import lines (each
// "import" and its path) and the rest, which starts on line k of the block
// (counting from 0).
func leadingImports(code string) (imports []string, k int, body string) {
	lines := strings.SplitAfter(code, "\n")
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
	return imports, k, strings.Join(lines[k:], "")
}

// fragmentFile renders a go block that is not a complete file as a file
// of its harness's package: its leading import lines become the file's
// imports, with those of known (packages by name) that it uses and does
// not declare a name of its own for. Statements become the body of a
// function of their own, followed by a blank assignment of each variable
// they declare, so that a fragment need not use what it shows; a block
// that is declarations (funcs, types) stays at the top level. Line
// directives make the compiler's errors point into the document.
func fragmentFile(t *testing.T, s snippet, fn string, known map[string]string) string {
	t.Helper()
	imports, k, body := leadingImports(s.code)

	// Parse the body to find what it uses and declares.
	const mode = parser.SkipObjectResolution
	f, err := parser.ParseFile(token.NewFileSet(), s.file, "package p\nfunc _() {\n"+body+"\n}\n", mode)
	stmts := err == nil
	if !stmts {
		var derr error
		f, derr = parser.ParseFile(token.NewFileSet(), s.file, "package p\n"+body, mode)
		require.NoError(t, derr, "%s:%d: the go block is not a file, statements nor declarations (as statements: %v)", s.file, s.line, err)
	}
	used, own, declared := map[string]bool{}, map[string]bool{}, []string{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, e := range n.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						own[id.Name] = true
					}
				}
			}
		case *ast.ValueSpec:
			for _, id := range n.Names {
				own[id.Name] = true
			}
		case *ast.Field:
			for _, id := range n.Names {
				own[id.Name] = true
			}
		}
		return true
	})
	if stmts {
		for _, st := range f.Decls[0].(*ast.FuncDecl).Body.List {
			if as, ok := st.(*ast.AssignStmt); ok && as.Tok == token.DEFINE {
				for _, e := range as.Lhs {
					if id, ok := e.(*ast.Ident); ok && id.Name != "_" && !slices.Contains(declared, id.Name) {
						declared = append(declared, id.Name)
					}
				}
			}
		}
	}
	for name, imp := range known {
		if used[name] && !own[name] && !slices.ContainsFunc(imports, func(i string) bool {
			return strings.HasSuffix(i, "/"+name+`"`) || i == `"`+name+`"` || strings.HasPrefix(i, name+" ")
		}) {
			if path.Base(imp) == name {
				imports = append(imports, fmt.Sprintf("%q", imp))
			} else {
				imports = append(imports, fmt.Sprintf("%s %q", name, imp))
			}
		}
	}
	slices.Sort(imports)

	var b strings.Builder
	b.WriteString("package main\n\n")
	for _, i := range imports {
		fmt.Fprintf(&b, "import %s\n", i)
	}
	if !stmts {
		fmt.Fprintf(&b, "\n//line %s:%d\n%s\n", s.file, s.line+k, body)
		return b.String()
	}
	fmt.Fprintf(&b, "\nfunc %s() {\n//line %s:%d\n%s\n", fn, s.file, s.line+k, body)
	for _, d := range declared {
		fmt.Fprintf(&b, "\t_ = %s\n", d)
	}
	b.WriteString("}\n")
	return b.String()
}

// docHarnesses are the harnesses of the package docs' fragments, by the
// package's folder: each declares the placeholders that its package's
// fragments use and leave to the reader (a package without one gets an
// empty harness). myringPackage stands for the reader's ring backend.
var docHarnesses = map[string]string{
	"sink": `package main

import "context"

type Event struct{ Status int }

var (
	ctx = context.Background()
	ev  Event
)

func ship(context.Context, []Event) {}
`,
	"mpmc": `package main

import "context"

type Job struct{ ID int }

var (
	ctx  = context.Background()
	jobs []Job
)

func handle(Job) {}
`,
	"logsink/frontend": `package main

import (
	"log/slog"

	"github.com/shardedsink/shardedsink/logsink/frontend"
)

var (
	s     frontend.Stream
	level slog.Level
	msg   string
)
`,
	"slogsink": `package main

import "os"

var (
	file = os.Stderr
	id   = "r-1"
)
`,
	"otelsink": `package main

import (
	"context"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

var (
	ctx         = context.Background()
	exporter    sdktrace.SpanExporter
	logExporter sdklog.Exporter
)
`,
	"natssink": `package main

import (
	"context"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"
)

type Event struct{ ID int }

func (e Event) AppendJSON(dst []byte) []byte {
	return strconv.AppendInt(append(dst, ` + "`" + `{"id":` + "`" + `...), int64(e.ID), 10)
}

var (
	ctx = context.Background()
	js  jetstream.JetStream
	ev  Event
)
`,
	"natssink/embedded": `package main

import "github.com/shardedsink/shardedsink/natssink"

type Event struct{ ID int }

var cfg natssink.Config[Event]
`,
	"promsink":              metricsHarness,
	"promsink/natsprom":     natsMetricsHarness,
	"otelmetric":            metricsHarness,
	"otelmetric/natsmetric": natsMetricsHarness,
}

// myringPackage is package myring of ring/ringtest's snippet: a backend
// of the reader's.
const myringPackage = `package myring

import (
	"github.com/shardedsink/shardedsink/ring"
	"github.com/shardedsink/shardedsink/ring/vyukov"
)

func Factory[T any](capacity int) ring.Ring[T] { return vyukov.Factory[T](capacity) }
`

// docImports are the packages, by name, that a package doc's fragment may
// use without importing them, as a reader knows where they come from: the
// standard library's and the modules' dependencies' below, the user
// packages (added by the test), and myring.
var docImports = map[string]string{
	"context":    "context",
	"fmt":        "fmt",
	"http":       "net/http",
	"log":        "log",
	"os":         "os",
	"slog":       "log/slog",
	"testing":    "testing",
	"jetstream":  "github.com/nats-io/nats.go/jetstream",
	"prometheus": "github.com/prometheus/client_golang/prometheus",
	"promhttp":   "github.com/prometheus/client_golang/prometheus/promhttp",
	"zerolog":    "github.com/rs/zerolog",
	"otel":       "go.opentelemetry.io/otel",
	"sdklog":     "go.opentelemetry.io/otel/sdk/log",
	"sdktrace":   "go.opentelemetry.io/otel/sdk/trace",
	"zap":        "go.uber.org/zap",
	"zapcore":    "go.uber.org/zap/zapcore",
	"myring":     "example.com/snippets/myring",
}

// TestEveryGoSnippetCompiles builds every go block of snippetDocuments and
// of the package doc of every user package (docPackages: those of sink,
// mpmc, ring and its backends, logsink and its front-ends, and of the
// natssink, metrics and OpenTelemetry modules), in a module of its own
// that a go.work joins to the repository's modules (no network:
// GOPROXY=off). A block that starts with a package clause is a program of
// its own; any other is a fragment, compiled in the harness of its
// document (harness for the markdown files, docHarnesses for package
// docs; see fragmentFile for what it may leave undeclared or unimported).
//
// A package doc's code block is Go when it parses as Go once these
// conventions are applied (expandEllipses), and must otherwise have a
// shape of nonGoShapes (a shell command, JSON log lines, a table of
// metrics, a record layout), or the test fails naming its file and line:
//   - "..." on a line of its own stands for code the reader writes: dropped;
//   - "{ ... }" stands for handling the reader writes: a panic;
//   - "Config{..., X: y}", the fields the reader sets: "Config{X: y}".
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
			write(fmt.Sprintf("%s/fragment%d.go", pkg, i), fragmentFile(t, s, fmt.Sprintf("fragment%d", i), programImports))
		}
	}
	require.Positive(t, count, "no go block in %v", snippetDocuments)

	// The package docs: a package of the module for each, in a harness.
	pkgs := docPackages(t, root)
	known := maps.Clone(docImports)
	for _, p := range pkgs {
		known[p.name] = "github.com/shardedsink/shardedsink/" + p.dir
	}
	write("myring/myring.go", myringPackage)
	var covered []string
	for _, p := range pkgs {
		pkg := "pkg_" + strings.ReplaceAll(p.dir, "/", "_")
		fragments := 0
		for i, s := range p.blocks {
			count++
			if strings.HasPrefix(s.code, "package ") {
				write(fmt.Sprintf("%s_program%d/main.go", pkg, i), fmt.Sprintf("//line %s:%d\n%s", s.file, s.line, s.code))
				continue
			}
			if fragments == 0 {
				h, ok := docHarnesses[p.dir]
				if !ok {
					h = "package main\n"
				}
				write(pkg+"/harness.go", h+"\nfunc main() {}\n")
			}
			fragments++
			write(fmt.Sprintf("%s/fragment%d.go", pkg, i), fragmentFile(t, s, fmt.Sprintf("fragment%d", i), known))
		}
		if len(p.blocks) > 0 {
			covered = append(covered, p.dir)
		}
	}
	for h := range docHarnesses {
		require.Contains(t, covered, h, "docHarnesses has a harness for %s, whose package doc has no go block", h)
	}
	t.Logf("go blocks: %d, of %v and the package docs of %v", count, snippetDocuments, covered)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "./...")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOWORK="+filepath.Join(dir, "go.work"), "GOPROXY=off", "GOFLAGS=-buildvcs=false")
	out, err = build.CombinedOutput()
	require.NoError(t, err, "a go block of %v or of a package doc does not compile:\n%s", snippetDocuments, out)
}

// metricsHarness and natsMetricsHarness are the harnesses of the two
// metrics modules' package docs, whose snippets are the same but for the
// package they show: a sink's, and a natssink sink's.
const (
	metricsHarness = `package main

import "github.com/shardedsink/shardedsink/sink"

type Event struct{ Status int }

var action sink.ActionFunc[Event]
`
	natsMetricsHarness = `package main

import "github.com/nats-io/nats.go/jetstream"

type Order struct{ ID int }

var js jetstream.JetStream
`
)
