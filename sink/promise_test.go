package sink_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// thePromise is the one text of what a push waits for (sink's "What a
// push waits for", sink/handoff.go's header): every package that pushes
// states it in these words, and no other statement of a push's waits
// stands beside it.
const thePromise = "A push never waits on the destination, however slow: a full ring sheds, and a push parks only while its drain worker is short of CPU behind a destination that keeps up (or, with Spill, while the spiller moves values to disk), for at most HandOffWait in all"

// promiseHomes are the files that state thePromise, from the repository's
// root: the users' docs of every package that pushes, and the front page.
var promiseHomes = []string{
	"README.md",
	"sink/doc.go", "sink/handoff.go", "sink/sink.go", "sink/handle.go",
	"logsink/doc.go", "slogsink/doc.go", "zapsink/doc.go", "zerologsink/doc.go",
	"otelsink/doc.go", "natssink/doc.go", "natssink/sink.go",
}

// retired are statements of a push's waits that drifted from the code
// (issue 62 counted ten): none may come back in the promise's homes or in
// the docs that link to it.
var retired = []string{
	"It never blocks.",
	"the one wait there is",
	"never waits for a slow destination",
	"but never blocks a producer",
	"never waits for a slow writer",
	"until that Write has run sink.SlowDrain",
	"for at most ten of them",
	"OnEnd never waits)",
	"producers never wait,",
}

// linkers are the docs that refer to the promise by its section's name
// instead of stating it.
var linkers = []string{"sink/overflow.go", "sink/config.go", "sink/sink.go", "natssink/config.go", "otelsink/README.md"}

// plain is a doc's text as a reader sees it: comment markers, doc links'
// brackets, markdown's backticks and line breaks gone.
func plain(text string) string {
	text = regexp.MustCompile(`(?m)^\s*//\s?`).ReplaceAllString(text, "")
	text = strings.NewReplacer("[", "", "]", "", "`", "").Replace(text)
	return strings.Join(strings.Fields(text), " ")
}

// TestThePromiseIsOneText holds every statement of what a push waits for
// to one text, as issue 62 asked: each home states it word for word, the
// linkers name its section, and no retired wording is left anywhere.
func TestThePromiseIsOneText(t *testing.T) {
	read := func(path string) string {
		raw, err := os.ReadFile(filepath.Join("..", path))
		require.NoError(t, err)
		return plain(string(raw))
	}
	lower := strings.ToLower(thePromise)
	for _, f := range promiseHomes {
		text := read(f)
		require.Contains(t, strings.ToLower(text), lower, "%s does not state what a push waits for in the one text", f)
	}
	for _, f := range linkers {
		require.Contains(t, read(f), `"What a push waits for"`, "%s does not link the promise's section", f)
	}
	for _, f := range append(promiseHomes, linkers...) {
		text := read(f)
		for _, r := range retired {
			require.NotContains(t, text, r, "%s still says %q", f, r)
		}
	}
}

// theCrashWindow is the one text of what a crash loses with a spill tier
// (issue 64): the package doc and the front page state it in these words.
const theCrashWindow = "a crash loses the values in the rings and in batches, and those spilled since the last sync"

func TestTheCrashWindowIsOneText(t *testing.T) {
	for _, f := range []string{"README.md", "sink/doc.go", "docs/design.md"} {
		raw, err := os.ReadFile(filepath.Join("..", f))
		require.NoError(t, err)
		text := strings.ToLower(plain(string(raw)))
		text = strings.ReplaceAll(text, "a crash (sigkill, or the machine) loses", "a crash loses")
		require.Contains(t, text, theCrashWindow, "%s does not state the crash window in the one text", f)
	}
}
