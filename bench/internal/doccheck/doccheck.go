// Package doccheck finds the shell commands that the repository's
// documentation tells a reader to type, so that a test can run every one
// of them (or its quick form) and no documented command rots, and the
// phrases that point at a table by its place ("the table above") where no
// table is, so that none points the wrong way after an edit.
package doccheck

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Command is one shell command of a markdown file: a line of an sh, bash or
// console block (its trailing comment removed, continuation lines joined),
// or an inline code span outside such blocks that starts like a command a
// reader would type (go run, go test, bash, ...).
type Command struct {
	File string // relative to the root
	Line int    // of its first line
	Text string
}

// Commands returns every command of the sh, bash and console fenced blocks
// of the markdown files at root/paths (globs allowed), in file order.
func Commands(root string, paths ...string) ([]Command, error) {
	var files []string
	for _, p := range paths {
		m, err := filepath.Glob(filepath.Join(root, p))
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	var out []Command
	for _, f := range files {
		cmds, err := commandsOf(f)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(root, f)
		for i := range cmds {
			cmds[i].File = filepath.ToSlash(rel)
		}
		out = append(out, cmds...)
	}
	return out, nil
}

// commandsOf reads one markdown file.
func commandsOf(path string) ([]Command, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Command
	sc := bufio.NewScanner(f)
	inShell, inOther := false, false
	var pending *Command
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			switch {
			case inShell || inOther:
				inShell, inOther = false, false
			case isShell(strings.TrimPrefix(trimmed, "```")):
				inShell = true
			default:
				inOther = true
			}
			continue
		}
		if inOther {
			continue
		}
		if !inShell {
			for _, span := range inlineCommands(line) {
				out = append(out, Command{Line: n, Text: span})
			}
			continue
		}
		text := stripComment(trimmed)
		if pending != nil {
			pending.Text += " " + strings.TrimSuffix(text, "\\")
			if !strings.HasSuffix(text, "\\") {
				pending.Text = strings.Join(strings.Fields(pending.Text), " ")
				out = append(out, *pending)
				pending = nil
			}
			continue
		}
		if text == "" {
			continue
		}
		c := Command{Line: n, Text: strings.TrimSuffix(text, "\\")}
		if strings.HasSuffix(text, "\\") {
			pending = &c
			continue
		}
		c.Text = strings.Join(strings.Fields(c.Text), " ")
		out = append(out, c)
	}
	return out, sc.Err()
}

// isShell reports whether a fence's info string names a shell.
func isShell(info string) bool {
	lang, _, _ := strings.Cut(strings.TrimSpace(info), " ")
	switch lang {
	case "sh", "bash", "console", "shell":
		return true
	}
	return false
}

// stripComment removes a comment that starts with " #" or at the start of
// the line, outside quotes.
func stripComment(line string) string {
	var quote rune
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return strings.TrimSpace(line[:i])
		}
	}
	return strings.TrimSpace(line)
}

// commandStarts are the beginnings of an inline code span that make it a
// command.
var commandStarts = []string{"go run ", "go test ", "go get ", "go install ", "go vet ", "go work ", "bash ", "RUNS="}

// inlineCommands returns the inline code spans of a markdown line that are
// commands.
func inlineCommands(line string) []string {
	var out []string
	for {
		i := strings.IndexByte(line, '`')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(line[i+1:], '`')
		if j < 0 {
			return out
		}
		span := line[i+1 : i+1+j]
		line = line[i+1+j+1:]
		for _, p := range commandStarts {
			if strings.HasPrefix(span, p) {
				out = append(out, strings.Join(strings.Fields(strings.ReplaceAll(span, `\|`, "|")), " "))
				break
			}
		}
	}
}

// TableReference is a phrase of a markdown file that points at a table by
// its place: "the table above", "the tables below".
type TableReference struct {
	File string // relative to the root
	Line int
	Text string // the phrase
}

// tableRef is the phrase of a TableReference, which may run over a line
// break.
var tableRef = regexp.MustCompile(`\b[Tt]he\s+tables?\s+(above|below)\b`)

// heading is a markdown heading outside code blocks: its level, then text.
var heading = regexp.MustCompile(`^(#{1,6}) `)

// DanglingTableReferences returns the phrases "the table above" and "the
// table(s) below" of the markdown files at root/paths (globs allowed) that
// have no table where they point: for "below", no table row between the
// phrase and the next heading of its section's level or higher (so its
// subsections count); for "above", none between the start of its
// top-level (##) section and the phrase. Rows and headings inside fenced
// code blocks do not count.
func DanglingTableReferences(root string, paths ...string) ([]TableReference, error) {
	var out []TableReference
	for _, p := range paths {
		files, err := filepath.Glob(filepath.Join(root, p))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			rel, _ := filepath.Rel(root, f)
			for _, r := range danglingIn(strings.Split(string(raw), "\n")) {
				r.File = filepath.ToSlash(rel)
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// danglingIn is DanglingTableReferences for the lines of one file.
func danglingIn(lines []string) []TableReference {
	level := make([]int, len(lines)) // of the heading on the line; 0: none
	row := make([]bool, len(lines))  // a table row
	fenced := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if m := heading.FindStringSubmatch(l); m != nil {
			level[i] = len(m[1])
		}
		row[i] = strings.HasPrefix(t, "|")
	}
	var out []TableReference
	for i, l := range lines {
		joined := l
		if i+1 < len(lines) {
			joined += " " + lines[i+1]
		}
		for _, m := range tableRef.FindAllStringSubmatchIndex(joined, -1) {
			if m[0] >= len(l) {
				continue // the next line's, found there
			}
			found := false
			if joined[m[2]:m[3]] == "below" {
				lvl := 1
				for j := i; j >= 0; j-- {
					if level[j] > 0 {
						lvl = level[j]
						break
					}
				}
				for j := i + 1; j < len(lines) && (level[j] == 0 || level[j] > lvl); j++ {
					found = found || row[j]
				}
			} else {
				for j := i - 1; j >= 0 && (level[j] == 0 || level[j] > 2); j-- {
					found = found || row[j]
				}
			}
			if !found {
				out = append(out, TableReference{Line: i + 1, Text: strings.Join(strings.Fields(joined[m[0]:m[1]]), " ")})
			}
		}
	}
	return out
}
