package usercost_test

import (
	"os"
	"strings"
	"testing"
)

// TestTwinDiffersOnlyInTheAtomicImport keeps withatomic's benchmarks the
// same as these, so that the comparison measures the import alone.
func TestTwinDiffersOnlyInTheAtomicImport(t *testing.T) {
	mine, err := os.ReadFile("usercost_test.go")
	if err != nil {
		t.Fatal(err)
	}
	twin, err := os.ReadFile("withatomic/withatomic_test.go")
	if err != nil {
		t.Fatal(err)
	}
	want := string(mine)
	want = strings.Replace(want, "package usercost_test", "package withatomic_test", 1)
	want = strings.Replace(want, "import (\n\t\"context\"\n", "import (\n\t\"context\"\n\t\"sync/atomic\"\n", 1)
	want = strings.Replace(want, "// round is the number",
		"// The one difference to usercost: sync/atomic is imported here.\nvar _ atomic.Uint64\n\n// round is the number", 1)
	if string(twin) != want {
		t.Fatal("withatomic/withatomic_test.go is not usercost_test.go plus the sync/atomic import: copy the change over")
	}
	for _, imp := range []string{`"sync/atomic"`, `"sync"`} {
		if strings.Contains(string(mine), imp) {
			t.Errorf("usercost_test.go imports %s: it must import only what a user's program would", imp)
		}
	}
}
