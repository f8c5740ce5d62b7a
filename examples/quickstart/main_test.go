package main

import (
	"bytes"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pushesLine is the report's accounting line.
var pushesLine = regexp.MustCompile(`(?m)^pushes +(\d+) attempted = (\d+) accepted \+ (\d+) dropped \(ring full\)$`)

func TestRunAddsUp(t *testing.T) {
	for _, c := range []struct {
		pace    time.Duration
		handOff bool
	}{{0, true}, {time.Millisecond, true}, {0, false}} {
		pace := c.pace
		var out bytes.Buffer
		if err := run(&out, 16, 1000, 64, pace, c.handOff); err != nil {
			t.Fatalf("pace %v, hand-off %v: %v", pace, c.handOff, err)
		}
		if off := strings.Contains(out.String(), "The hand-off was off"); off == c.handOff {
			t.Errorf("pace %v, hand-off %v: the report says the hand-off was off: %v", pace, c.handOff, off)
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

// TestTheHandOffDecidesWhetherAFlatOutRunSheds holds the package doc's
// account of -pace 0 on one processor, where a producer pushing flat out
// outruns the drain worker for certain: with the hand-off (the default) a
// push into a full ring waits for the worker and almost nothing is
// dropped; with -handoff=false most pushes are.
func TestTheHandOffDecidesWhetherAFlatOutRunSheds(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const total = 16 * 1000
	dropped := func(handOff bool) int {
		var out bytes.Buffer
		require.NoError(t, run(&out, 16, 1000, 64, 0, handOff))
		m := pushesLine.FindStringSubmatch(out.String())
		require.NotNil(t, m, "no accounting line in the report:\n%s", out.String())
		n, err := strconv.Atoi(m[3])
		require.NoError(t, err)
		return n
	}
	require.LessOrEqual(t, dropped(true), total/100, "with the hand-off, a flat-out run drops few or none")
	require.Greater(t, dropped(false), total/2, "without it, a flat-out run drops most pushes")
}
