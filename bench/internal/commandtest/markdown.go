package commandtest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// MarkdownWith returns the markdown files under root (the repository, from
// a command's tests "../..") whose text contains marker, in lexical order,
// so that a test of a generated block checks it wherever the documentation
// keeps it. Folders whose names start with a dot (.git) are skipped. An
// error walking the tree fails t.
func MarkdownWith(t testing.TB, root, marker string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".md") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(marker)) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("looking for %q in the markdown under %s: %v", marker, root, err)
	}
	return files
}
