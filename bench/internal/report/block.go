package report

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// FromPaths expands the value of a -from flag, a comma-separated list of
// files and globs, into paths in list order (each glob's matches sorted).
// A glob that matches nothing, or a list of none, is an error: a table
// rendered from fewer runs than the reader was told would mislead.
func FromPaths(list string) ([]string, error) {
	var paths []string
	for _, pat := range strings.Split(list, ",") {
		if pat = strings.TrimSpace(pat); pat == "" {
			continue
		}
		matches, err := filepath.Glob(pat)
		if err != nil {
			return nil, fmt.Errorf("-from: %w", err)
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("-from: no file matches %q", pat)
		}
		slices.Sort(matches)
		paths = append(paths, matches...)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("-from: no files in %q", list)
	}
	return paths, nil
}
