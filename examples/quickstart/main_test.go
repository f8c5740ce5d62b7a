package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pushesLine is the report's accounting line.
var pushesLine = regexp.MustCompile(`(?m)^pushes +(\d+) attempted = (\d+) accepted \+ (\d+) dropped \(ring full\)$`)

func TestRunAddsUp(t *testing.T) {
	for _, pace := range []time.Duration{0, time.Millisecond} {
		var out bytes.Buffer
		if err := run(&out, 16, 1000, 64, pace); err != nil {
			t.Fatalf("pace %v: %v", pace, err)
		}
		report := out.String()
		if n := strings.Count(report, "\n"); n > 20 {
			t.Errorf("pace %v: the report has %d lines, more than a screen's 20:\n%s", pace, n, report)
		}
		m := pushesLine.FindStringSubmatch(report)
		if m == nil {
			t.Fatalf("pace %v: no accounting line in the report:\n%s", pace, report)
		}
		attempted, _ := strconv.Atoi(m[1])
		accepted, _ := strconv.Atoi(m[2])
		dropped, _ := strconv.Atoi(m[3])
		if attempted != 16*1000 || accepted+dropped != attempted {
			t.Errorf("pace %v: attempted %d, accepted %d, dropped %d; want 16000 attempted, the sum of the other two", pace, attempted, accepted, dropped)
		}
		for _, want := range []string{
			fmt.Sprintf("16 goroutines each pushed 1000 events %s,\n", map[bool]string{true: "as fast as they can", false: "in bursts of 100 with a 1ms pause after each"}[pace == 0]),
			"shards (a ring of 64 events and a drain worker each).\n",
			fmt.Sprintf("Drain     %9d events in ", accepted),
			"of them with status 503 (every 100th event pushed has it)\n",
			"Shutdown          0 events left queued\n",
			"every accepted\nevent reached Drain exactly once.",
		} {
			if !strings.Contains(report, want) {
				t.Errorf("pace %v: the report lacks %q:\n%s", pace, want, report)
			}
		}
	}
}
