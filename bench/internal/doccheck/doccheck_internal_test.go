package doccheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCommandsReadsShellBlocksOnly(t *testing.T) {
	dir := t.TempDir()
	md := "# T, `go run ./inline -h` and `fmt.Println`\n\n```sh\ngo run ./x   # the demo\n\n# a comment line\ngo test \\\n  -run 'a#b' ./...\n```\n\n```go\nfmt.Println(\"not a command\")\n```\n\n```bash\necho \"quoted # not a comment\"\n```\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.md"), []byte(md), 0o644))
	got, err := Commands(dir, "*.md")
	require.NoError(t, err)
	require.Equal(t, []Command{
		{File: "a.md", Line: 1, Text: "go run ./inline -h"},
		{File: "a.md", Line: 4, Text: "go run ./x"},
		{File: "a.md", Line: 7, Text: "go test -run 'a#b' ./..."},
		{File: "a.md", Line: 16, Text: `echo "quoted # not a comment"`},
	}, got)
}

func TestDanglingTableReferencesLookWhereTheyPoint(t *testing.T) {
	dir := t.TempDir()
	md := strings.Join([]string{
		"## A", // 1
		"",
		"| a |", // 3
		"",
		"### A.1",
		"In the table above, fine; the table", // 6: above spans A's ## section
		"below is not here.",                  // 7
		"```sh",
		"# not a heading",
		"| not a row",
		"```",
		"## B",
		"The tables below, in a subsection:", // 13
		"### B.1",
		"| b |",
		"The table above is B.1's.", // 16
		"## C",
		"The table above is not in C.", // 18
	}, "\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.md"), []byte(md), 0o644))
	got, err := DanglingTableReferences(dir, "*.md")
	require.NoError(t, err)
	require.Equal(t, []TableReference{
		{File: "a.md", Line: 6, Text: "the table below"},
		{File: "a.md", Line: 18, Text: "The table above"},
	}, got)
}
