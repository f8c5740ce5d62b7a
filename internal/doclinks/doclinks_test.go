package doclinks

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// module is the core module's path; root is its directory, seen from here.
const (
	module = "github.com/shardedsink/shardedsink"
	root   = "../.."
)

// checked are the packages whose user documentation the test reads: the
// public packages of the core module and their public sub-packages, but
// ring/vyukov, whose Ring doc explains the algorithm in the terms of its
// fields (markBit, oneLap), each defined where it is first used.
var checked = []string{
	"sink", "logsink", "slogsink", "mpmc", "ring",
	"sink/spill", "sink/sinktest", "logsink/frontend", "logsink/logsinktest", "ring/mutex", "ring/chanring", "ring/ringtest",
}

// pkg is one package of the core module, parsed for this machine's build.
type pkg struct {
	doc *doc.Package
	// unexported holds the names of its unexported identifiers that a
	// reader could not take for a word: top-level ones, methods and struct
	// fields with an upper-case letter (cpuHomeTable, not shard).
	unexported map[string]bool
}

// load parses the package in dir (relative to the module root), for the
// GOOS and GOARCH of the test, and reads its exported documentation.
func load(t *testing.T, dir string) *pkg {
	t.Helper()
	abs := filepath.Join(root, filepath.FromSlash(dir))
	entries, err := os.ReadDir(abs)
	require.NoError(t, err)
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if ok, err := build.Default.MatchFile(abs, name); err != nil || !ok {
			require.NoError(t, err)
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(abs, name), nil, parser.ParseComments)
		require.NoError(t, err)
		files = append(files, f)
	}
	require.NotEmpty(t, files, "%s has no Go files", dir)

	p := &pkg{unexported: map[string]bool{}}
	add := func(id *ast.Ident) {
		if id != nil && !id.IsExported() && id.Name != "_" && strings.IndexFunc(id.Name, unicode.IsUpper) > 0 {
			p.unexported[id.Name] = true
		}
	}
	for _, f := range files { // before doc.NewFromFiles, which drops the unexported
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				add(n.Name)
			case *ast.TypeSpec:
				add(n.Name)
			case *ast.ValueSpec:
				for _, id := range n.Names {
					add(id)
				}
			case *ast.Field:
				for _, id := range n.Names {
					add(id)
				}
			case *ast.BlockStmt:
				return false // locals are no reader's concern
			}
			return true
		})
	}
	d, err := doc.NewFromFiles(fset, files, path.Join(module, dir))
	require.NoError(t, err)
	p.doc = d
	return p
}

// docText is one doc comment that go doc shows.
type docText struct {
	where string // the identifier it documents
	text  string
}

// docs returns the package's doc and those of its exported identifiers,
// with the doc comments of the exported fields of its struct types and
// the methods of its interface types.
func docs(d *doc.Package) []docText {
	out := []docText{{"package " + d.Name, d.Doc}}
	values := func(prefix string, vs []*doc.Value) {
		for _, v := range vs {
			out = append(out, docText{prefix + strings.Join(v.Names, ", "), v.Doc})
			for _, s := range v.Decl.Specs {
				if vs, ok := s.(*ast.ValueSpec); ok && vs.Doc != nil && len(v.Decl.Specs) > 1 {
					out = append(out, docText{prefix + vs.Names[0].Name, vs.Doc.Text()})
				}
			}
		}
	}
	funcs := func(prefix string, fs []*doc.Func) {
		for _, f := range fs {
			out = append(out, docText{prefix + f.Name, f.Doc})
		}
	}
	values("", d.Consts)
	values("", d.Vars)
	funcs("", d.Funcs)
	for _, t := range d.Types {
		out = append(out, docText{t.Name, t.Doc})
		values("", t.Consts)
		values("", t.Vars)
		funcs("", t.Funcs)
		funcs(t.Name+".", t.Methods)
		for _, s := range t.Decl.Specs {
			ts, ok := s.(*ast.TypeSpec)
			if !ok {
				continue
			}
			var fields *ast.FieldList
			switch tt := ts.Type.(type) {
			case *ast.StructType:
				fields = tt.Fields
			case *ast.InterfaceType:
				fields = tt.Methods
			}
			if fields == nil {
				continue
			}
			for _, f := range fields.List {
				for _, c := range []*ast.CommentGroup{f.Doc, f.Comment} {
					if c != nil && len(f.Names) > 0 && f.Names[0].IsExported() {
						out = append(out, docText{t.Name + "." + f.Names[0].Name, c.Text()})
					}
				}
			}
		}
	}
	return out
}

// link is what a doc link names: [recv.name], or [pkg.name] of importPath.
type link struct {
	importPath, recv, name string
}

// links returns the doc links of text that resolve, as d's parser resolves
// them, and what is wrong with those that look like links ([Name],
// [T.Name], [pkg.Name]) but do not.
func links(d *doc.Package, text string) (resolved []link, broken []string) {
	real := d.Parser()
	var missed []string
	// A parser that takes every link-shaped [text], noting what the real one
	// would not resolve: unresolved, go/doc leaves it as plain text.
	p := &comment.Parser{
		LookupPackage: func(name string) (string, bool) {
			if ip, ok := real.LookupPackage(name); ok {
				return ip, true
			}
			if ip, ok := comment.DefaultLookupPackage(name); ok || !token.IsIdentifier(name) {
				return ip, ok // [1, 32] is no link, for go/doc either
			}
			missed = append(missed, "package "+name+", which it does not import")
			return "?" + name, true
		},
		LookupSym: func(recv, name string) bool {
			if !real.LookupSym(recv, name) {
				missed = append(missed, "["+strings.TrimPrefix(recv+"."+name, ".")+"], which does not resolve")
			}
			return true
		},
	}
	var walk func(ts []comment.Text)
	walk = func(ts []comment.Text) {
		for _, t := range ts {
			switch t := t.(type) {
			case *comment.DocLink:
				if !strings.HasPrefix(t.ImportPath, "?") {
					resolved = append(resolved, link{t.ImportPath, t.Recv, t.Name})
				}
			case *comment.Link:
				walk(t.Text)
			}
		}
	}
	var blocks func(bs []comment.Block)
	blocks = func(bs []comment.Block) {
		for _, b := range bs {
			switch b := b.(type) {
			case *comment.Paragraph:
				walk(b.Text)
			case *comment.Heading:
				walk(b.Text)
			case *comment.List:
				for _, it := range b.Items {
					blocks(it.Content)
				}
			}
		}
	}
	blocks(p.Parse(text).Content)
	return resolved, missed
}

// forMaintainers begins the paragraphs of a package doc that map the code
// for its maintainers ("Where the rules live"): they name the unexported
// identifiers and files that implement each rule, on purpose.
const forMaintainers = "For a maintainer"

// prose is text without its code blocks and its paragraphs for
// maintainers: the part a user reads as words.
func prose(text string) string {
	var b strings.Builder
	var blocks func(bs []comment.Block)
	var words func(ts []comment.Text)
	words = func(ts []comment.Text) {
		for _, t := range ts {
			switch t := t.(type) {
			case comment.Plain:
				b.WriteString(string(t))
			case comment.Italic:
				b.WriteString(string(t))
			case *comment.Link:
				words(t.Text)
			case *comment.DocLink:
				words(t.Text)
			}
		}
		b.WriteString("\n")
	}
	blocks = func(bs []comment.Block) {
		for _, bl := range bs {
			switch bl := bl.(type) {
			case *comment.Paragraph:
				if p, ok := bl.Text[0].(comment.Plain); ok && strings.HasPrefix(string(p), forMaintainers) {
					continue
				}
				words(bl.Text)
			case *comment.Heading:
				words(bl.Text)
			case *comment.List:
				for _, it := range bl.Items {
					blocks(it.Content)
				}
			}
		}
	}
	blocks(new(comment.Parser).Parse(text).Content)
	return b.String()
}

var word = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// TestTheUserDocsLinkOnlyWhatResolvesAndNameOnlyWhatIsExported reads the
// doc comments that go doc shows for the packages of checked and fails on
// a [Name] link that go/doc does not resolve (in the package, or, for a
// link into another package of this module, in that package), and on a
// word that is an unexported identifier of one of those packages, which a
// user can neither see nor use (outside the paragraphs for maintainers).
func TestTheUserDocsLinkOnlyWhatResolvesAndNameOnlyWhatIsExported(t *testing.T) {
	loaded := map[string]*pkg{}
	get := func(dir string) *pkg {
		if loaded[dir] == nil {
			loaded[dir] = load(t, dir)
		}
		return loaded[dir]
	}
	unexported := map[string]string{} // name: package
	for _, dir := range checked {
		for name := range get(dir).unexported {
			unexported[name] = dir
		}
	}
	var problems []string
	for _, dir := range checked {
		p := get(dir)
		for _, d := range docs(p.doc) {
			resolved, broken := links(p.doc, d.text)
			for _, b := range broken {
				problems = append(problems, fmt.Sprintf("%s: the doc of %s links %s", dir, d.where, b))
			}
			for _, l := range resolved {
				other, ok := strings.CutPrefix(l.importPath, module+"/")
				if !ok || other == dir {
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(other))); err != nil {
					problems = append(problems, fmt.Sprintf("%s: the doc of %s links package %s, which the module does not have", dir, d.where, l.importPath))
					continue
				}
				if l.name != "" && !get(other).doc.Parser().LookupSym(l.recv, l.name) {
					problems = append(problems, fmt.Sprintf("%s: the doc of %s links [%s.%s], which %s does not export",
						dir, d.where, path.Base(other), strings.TrimPrefix(l.recv+"."+l.name, "."), other))
				}
			}
			for _, w := range word.FindAllString(prose(d.text), -1) {
				if in, ok := unexported[w]; ok {
					problems = append(problems, fmt.Sprintf("%s: the doc of %s names %s, unexported in %s", dir, d.where, w, in))
				}
			}
		}
	}
	slices.Sort(problems)
	problems = slices.Compact(problems)
	require.True(t, len(problems) == 0, "user docs that lead nowhere:\n%s", strings.Join(problems, "\n"))
}
