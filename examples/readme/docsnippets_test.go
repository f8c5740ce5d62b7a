package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// userPackages must be among the packages that docPackages finds: a guard
// against a walk that goes wrong and covers nothing.
var userPackages = []string{
	"sink", "sink/spill", "sink/sinktest", "mpmc",
	"ring", "ring/chanring", "ring/mutex", "ring/vyukov", "ring/zenq", "ring/ringtest",
	"logsink", "logsink/frontend", "slogsink", "zapsink", "zerologsink",
	"otelsink", "natssink", "promsink", "promsink/natsprom",
	"otelmetric", "otelmetric/natsmetric",
}

// docPackage is a user package: its folder relative to the repository
// root, its name, and the go blocks of its package doc.
type docPackage struct {
	dir, name string
	blocks    []snippet
}

// docPackages returns the user packages of the repository, those of every
// module of go.work: each folder under root that holds a Go file other
// than a test, but for internal, testdata and hidden folders and the trees
// of the bench and examples modules. A package's doc is read from every
// file that has one (build tags are ignored: ring/zenq's doc is read, its
// code needs a tag). Each code block of a doc is a go block when it parses
// as Go (goBlockError) and must otherwise have one of nonGoShapes; the
// test fails, naming the file and line, on a block that has neither.
func docPackages(t *testing.T, root string) []docPackage {
	t.Helper()
	var pkgs []docPackage
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if rel != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
			name == "internal" || name == "testdata" || rel == "bench" || rel == "examples") {
			return filepath.SkipDir
		}
		if pkg, ok := readDocPackage(t, root, rel); ok {
			pkgs = append(pkgs, pkg)
		}
		return nil
	})
	require.NoError(t, err)
	dirs := make([]string, len(pkgs))
	for i, p := range pkgs {
		dirs[i] = p.dir
	}
	require.Subset(t, dirs, userPackages, "the walk of %s missed user packages", root)
	return pkgs
}

// readDocPackage reads the package in root/dir, if the folder holds one.
func readDocPackage(t *testing.T, root, dir string) (docPackage, bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
	require.NoError(t, err)
	pkg := docPackage{dir: dir}
	docs := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.PackageClauseOnly)
		require.NoError(t, err)
		pkg.name = f.Name.Name
		if f.Doc == nil {
			continue
		}
		docs++
		file := filepath.ToSlash(filepath.Join(dir, filepath.Base(path)))
		for _, s := range docCodeBlocks(t, fset, file, f.Doc) {
			if err := goBlockError(s); err != nil {
				shape := nonGoShape(s.code)
				require.NotEmpty(t, shape, "%s:%d: a code block of the package doc is neither Go nor one of the shapes of nonGoShapes:\n%s\nas Go: %v", s.file, s.line, s.code, err)
				t.Logf("%s:%d: not Go: %s", s.file, s.line, shape)
				continue
			}
			pkg.blocks = append(pkg.blocks, s)
		}
	}
	if pkg.name == "" {
		return pkg, false
	}
	require.Positive(t, docs, "%s: package %s has no package doc", dir, pkg.name)
	return pkg, true
}

// docCodeBlocks returns the code blocks of a doc comment, as go/doc/comment
// parses them, each with the line of the file its first line is on and with
// the conventions of expandEllipses applied.
func docCodeBlocks(t *testing.T, fset *token.FileSet, file string, doc *ast.CommentGroup) []snippet {
	t.Helper()
	// The comment's lines, without their markers, and where each one is.
	var raw []string
	var at []int
	for _, c := range doc.List {
		line := fset.Position(c.Slash).Line
		if text, ok := strings.CutPrefix(c.Text, "//"); ok {
			raw, at = append(raw, text), append(at, line)
			continue
		}
		for i, l := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(c.Text, "/*"), "*/"), "\n") {
			raw, at = append(raw, l), append(at, line+i)
		}
	}
	var out []snippet
	var p comment.Parser
	next := 0
	for _, b := range p.Parse(doc.Text()).Content {
		code, ok := b.(*comment.Code)
		if !ok {
			continue
		}
		lines := strings.Split(strings.TrimSuffix(code.Text, "\n"), "\n")
		i := next
		for ; i+len(lines) <= len(raw); i++ {
			if slices.EqualFunc(raw[i:i+len(lines)], lines, func(r, l string) bool {
				return strings.TrimSpace(r) == strings.TrimSpace(l)
			}) {
				break
			}
		}
		require.LessOrEqual(t, i+len(lines), len(raw), "%s: a code block of the package doc is not found among its lines:\n%s", file, code.Text)
		out = append(out, snippet{file: file, line: at[i], code: expandEllipses(code.Text)})
		next = i + len(lines)
	}
	return out
}

// expandEllipses applies the conventions by which a package doc's go block
// leaves to the reader what is theirs to write (TestEveryGoSnippetCompiles
// lists them), keeping the lines where they are.
func expandEllipses(code string) string {
	lines := strings.Split(code, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == "..." {
			lines[i] = ""
			continue
		}
		l = strings.ReplaceAll(l, "{ ... }", `{ panic("handled by the reader") }`)
		lines[i] = strings.ReplaceAll(l, "{..., ", "{")
	}
	return strings.Join(lines, "\n")
}

// goBlockError returns nil when the code of s, its leading import lines
// set aside, parses as a Go file, as statements or as declarations, and
// otherwise the error of its parse as statements (or as a file, when it
// starts with a package clause), at its line of s.file.
func goBlockError(s snippet) error {
	const mode = parser.SkipObjectResolution
	if strings.HasPrefix(s.code, "package ") {
		_, err := parser.ParseFile(token.NewFileSet(), "", fmt.Sprintf("//line %s:%d\n%s", s.file, s.line, s.code), mode)
		return err
	}
	_, k, body := leadingImports(s.code)
	at := fmt.Sprintf("//line %s:%d\n", s.file, s.line+k)
	_, err := parser.ParseFile(token.NewFileSet(), "", "package p\nfunc _() {\n"+at+body+"\n}\n", mode)
	if err == nil {
		return nil
	}
	if _, decls := parser.ParseFile(token.NewFileSet(), "", "package p\n"+at+body, mode); decls == nil {
		return nil
	}
	return err
}

// nonGoShapes are the shapes of the code blocks of a package doc that are
// not Go. Each is strict, so that a broken go block does not pass for one.
var nonGoShapes = []struct {
	name  string
	match func(lines []string) bool
}{
	// go test ..., bash script.sh, cd dir: a command, whose further lines
	// each continue one that ends in a backslash.
	{"a shell command", func(lines []string) bool {
		if !commandStart.MatchString(lines[0]) {
			return false
		}
		for i := 1; i < len(lines); i++ {
			if !strings.HasSuffix(lines[i-1], ` \`) {
				return false
			}
		}
		return true
	}},
	// {"level":"WARN","msg":...}: lines of a JSON log, each an object.
	{"JSON log lines", func(lines []string) bool {
		for _, l := range lines {
			if !strings.HasPrefix(l, `{"`) || !json.Valid([]byte(l)) {
				return false
			}
		}
		return true
	}},
	// A table of metrics: rows of a metric's name, its kind and its
	// description, which may go on in lines indented by spaces.
	{"a table of metrics", func(lines []string) bool {
		if !metricRow.MatchString(lines[0]) {
			return false
		}
		for _, l := range lines[1:] {
			if !metricRow.MatchString(l) && !continuation.MatchString(l) {
				return false
			}
		}
		return true
	}},
	// length uint32 | CRC-32C ... | payload: a record's layout, words
	// separated by bars.
	{"a record layout", func(lines []string) bool {
		for _, l := range lines {
			if !layoutRow.MatchString(l) {
				return false
			}
		}
		return true
	}},
}

var (
	commandStart = regexp.MustCompile(`^(go [a-z]+|bash|cd) `)
	metricRow    = regexp.MustCompile(`^[a-z][a-z0-9_.]*[a-z0-9] +(counter|gauge|updowncounter|histogram) +\S`)
	continuation = regexp.MustCompile(`^ {2,}\S[^\t]*$`)
	layoutRow    = regexp.MustCompile(`^[\w-]+( [\w-]+)*( \| [\w-]+( [\w-]+)*)+$`)
)

// nonGoShape returns the name of the shape of nonGoShapes that code has,
// or "".
func nonGoShape(code string) string {
	lines := strings.Split(strings.TrimSuffix(code, "\n"), "\n")
	for _, s := range nonGoShapes {
		if s.match(lines) {
			return s.name
		}
	}
	return ""
}

// The classification of code blocks: a go block, broken, is no other
// shape; and every code block of the package docs is Go or has a shape (a
// check that needs no go build, so that it runs with -short too).
func TestCodeBlockShapes(t *testing.T) {
	for code, want := range map[string]string{
		"x := f()\n...\nif err != nil { ... }\n":               "go",
		"s, _ := New(js, Config[Order]{..., Sink: Sink{}})\n":  "go",
		"func TestX(t *testing.T) {\n\tRun(t, F[int])\n}\n":    "go",
		"go test -race \\\n\t-tags zenq ./ring/zenq/\n":        "a shell command",
		"bash slogsink/testdata/bench.sh\n":                    "a shell command",
		`{"level":"warn","msg":"dropped","dropped":12}` + "\n": "JSON log lines",
		"a_total  counter  calls\n          more of it\n":      "a table of metrics",
		"a.b updowncounter {value} values\n":                   "a table of metrics",
		"length uint32 | CRC-32C of it uint32 | payload\n":     "a record layout",
		"x := f(\n":                "",
		"go func() {\n\tx()\n}(\n": "",
		"go f(x\n":                 "",
		"ok := s.Push(ev)         // false: dropped\nerr = f(\n": "",
		"{\"a\": 1}\nx := 1\n":             "",
		"a_total counter calls\nx := f(\n": "",
		"a | b(\n":                         "",
	} {
		got := nonGoShape(code)
		if goBlockError(snippet{file: "doc.go", line: 1, code: expandEllipses(code)}) == nil {
			got = "go"
		}
		require.Equal(t, want, got, "%q", code)
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	docPackages(t, root)
}
