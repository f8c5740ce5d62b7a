package main

import (
	"bytes"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEveryJobComesBackOnce(t *testing.T) {
	for _, tc := range []struct{ workers, jobs, queue int }{{4, 100, 16}, {1, 10, 1}, {8, 2000, 2}} {
		var out bytes.Buffer
		if err := run(&out, tc.workers, tc.jobs, tc.queue); err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		if tc.jobs == 100 && !strings.Contains(out.String(), "total 171700 from 100 results") {
			t.Fatalf("unexpected output:\n%s", out.String())
		}
	}
}
