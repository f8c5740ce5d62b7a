package doccheck

import (
	"os"
	"path/filepath"
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
