package frontpage

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The files whose tables the front page and docs/benchmarks.md quote: each
// generated table names its machine and the load it started at.
var measuredFiles = []string{
	"../../docs/benchmarks.md",
	"../../otelsink/README.md",
	"../channels/RESULTS.md",
	"../contended/RESULTS.md",
}

var (
	// machineLine is docs/benchmarks.md's statement of the one machine kind.
	machineLine = regexp.MustCompile(`ran on one machine kind, a 2-core (.+?) VM`)
	// loadBefore is the first load figure of a table's provenance line, in
	// each of the generators' spellings ("load average 0.42 0.5 0.6
	// before", "load before: 0.42", "load 0.42 0.5 0.6;"): the one-minute
	// load average when the run began.
	loadBefore = regexp.MustCompile(`\bload (?:average )?(?:before: )?([0-9]+\.[0-9]+)`)
	// manycoreBegin and manycoreEnd mark the blocks of runs on a many-core
	// machine ("manycore", "natssink-manycore"), which name their own.
	manycoreBegin = regexp.MustCompile(`^<!-- (?:[a-z]+-)?manycore:begin`)
	manycoreEnd   = regexp.MustCompile(`^<!-- (?:[a-z]+-)?manycore:end`)
)

// toRetake are the generated blocks taken on another machine kind than
// the one docs/benchmarks.md names, each with why: before the release
// (RELEASING.md) they are taken again on its kind, and this list is
// emptied. Their provenance must still name a CPU model and a quiet start.
var toRetake = map[string]string{
	"handoff": "issue 62's matrix, first taken in a session on an Intel Xeon VM",
}

// cpuModel is a provenance line's CPU model, in go test's "cpu:" spelling.
var cpuModel = regexp.MustCompile(`(AMD EPYC|Intel\(R\) Xeon\(R\))`)

// TestEveryTableNamesOneMachineAndAQuietStart checks issue 48's rule for
// the committed tables: every provenance line (a line outside a table that
// gives the load a run began at) names the CPU model that the top of
// docs/benchmarks.md names, on that line or the one before it, and that
// load is below 1 on 2 cores. The exceptions are the blocks of the runs on
// a many-core machine, which name their own.
func TestEveryTableNamesOneMachineAndAQuietStart(t *testing.T) {
	raw, err := os.ReadFile(measuredFiles[0])
	if err != nil {
		t.Fatal(err)
	}
	m := machineLine.FindSubmatch(raw)
	if m == nil {
		t.Fatalf("%s does not say %q", measuredFiles[0], machineLine)
	}
	model := string(m[1])

	seen := 0
	for _, f := range measuredFiles {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(raw), "\n")
		apart := false  // inside a block of a run on a many-core machine, the exception
		retake := false // inside a block of toRetake
		for i, line := range lines {
			switch {
			case manycoreBegin.MatchString(line):
				apart = true
			case manycoreEnd.MatchString(line):
				apart = false
			}
			for name := range toRetake {
				switch {
				case strings.HasPrefix(line, "<!-- "+name+":begin"):
					retake = true
				case strings.HasPrefix(line, "<!-- "+name+":end"):
					retake = false
				}
			}
			if apart || strings.HasPrefix(line, "|") {
				continue
			}
			lm := loadBefore.FindStringSubmatch(line)
			if lm == nil {
				continue
			}
			seen++
			where := f + ":" + strconv.Itoa(i+1)
			named := strings.Contains(line, model) || i > 0 && strings.Contains(lines[i-1], model)
			if retake {
				named = cpuModel.MatchString(line)
			}
			if !named {
				t.Errorf("%s: the table's provenance does not name %q: %.160s", where, model, line)
			}
			if load, _ := strconv.ParseFloat(lm[1], 64); load >= 1 {
				t.Errorf("%s: the run began at load %s, not below 1: take it again on a quiet machine", where, lm[1])
			}
		}
	}
	// Eleven in docs/benchmarks.md, one in otelsink's README, one in the
	// channels' RESULTS.md, two in the contended one: fewer would mean
	// that this test no longer recognises a generator's spelling.
	if seen < 15 {
		t.Errorf("found %d provenance lines in %v, want at least 15", seen, measuredFiles)
	}
}
