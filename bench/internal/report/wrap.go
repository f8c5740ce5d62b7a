package report

import "strings"

// FrontPageWidth is the width to which the generators wrap the prose of
// README.md's generated blocks: README.md's lines stay under 200 bytes
// (examples/readme checks it), and a continuation line under "- " costs
// its indent.
const FrontPageWidth = 120

// Wrap breaks one markdown paragraph (or list item) at spaces into lines of
// at most width bytes where it can (a word longer than width stays whole),
// the lines after the first starting with indent ("  " under "- "). It
// never breaks inside a code span, and never so that a line starts with
// what markdown would read as a new block (a list marker, a heading, a
// quote, a table row, HTML, a fence, a rule), so the rendered page is the
// same as unwrapped.
func Wrap(text string, width int, indent string) string {
	words := strings.Split(text, " ")
	// Glue the words of a code span together: a break inside one would
	// still render, but a reader of the source could not search it.
	var units []string
	for i := 0; i < len(words); i++ {
		u := words[i]
		for i+1 < len(words) && (strings.Count(u, "`")%2 == 1 || words[i+1] == "%") {
			i++
			u += " " + words[i] // and keep a percent sign by its number
		}
		units = append(units, u)
	}
	var b strings.Builder
	line := ""
	for _, u := range units {
		switch {
		case line == "":
			line = u
		case len(line)+1+len(u) <= width-len(indent) || startsBlock(u):
			line += " " + u
		default:
			b.WriteString(line + "\n" + indent)
			line = u
		}
	}
	b.WriteString(line)
	return b.String()
}

// startsBlock reports whether a line that starts with word would start a
// markdown block of its own instead of continuing a paragraph.
func startsBlock(word string) bool {
	switch {
	case word == "-" || word == "+" || word == "*" || word == ">" || word == "|":
		return true
	case strings.HasPrefix(word, "#") || strings.HasPrefix(word, ">") || strings.HasPrefix(word, "|"),
		strings.HasPrefix(word, "<") || strings.HasPrefix(word, "```"):
		return true // a heading, quote, table row, HTML block or fence
	case strings.Trim(word, "-") == "" || strings.Trim(word, "=") == "":
		return true // a setext heading's underline or a rule
	}
	// An ordered-list marker: digits, then "." or ")".
	d := strings.TrimLeft(word, "0123456789")
	return d != word && (d == "." || d == ")")
}
