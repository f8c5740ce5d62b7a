package report

import (
	"fmt"
	"os"
	"strings"
)

// A generated block is the text between two marker lines of a markdown
// file: a command renders it from committed measurements, replaces it in
// place with ReplaceBlock, and a drift test compares BlockOf of the file
// with a fresh rendering, so that no table in the documentation is a copy
// that can drift from its data.

// ReplaceBlock replaces the text between the markers begin and end in the
// file at path with block.
func ReplaceBlock(path, begin, end, block string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := string(data)
	i := strings.Index(text, begin)
	j := strings.Index(text, end)
	if i < 0 || j < i {
		return fmt.Errorf("-o %s: no generated block (the lines %q and %q)", path, begin, end)
	}
	text = text[:i+len(begin)] + "\n" + block + text[j:]
	return WriteFile(path, []byte(text))
}

// BlockOf returns the text between the markers begin and end.
func BlockOf(text, begin, end string) (string, error) {
	i := strings.Index(text, begin)
	j := strings.Index(text, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("no generated block between %q and %q", begin, end)
	}
	return strings.TrimPrefix(text[i+len(begin):j], "\n"), nil
}
