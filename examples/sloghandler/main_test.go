package main

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRunAddsUp(t *testing.T) {
	for _, delay := range []time.Duration{0, 200 * time.Millisecond} {
		out := &slowWriter{delay: delay, w: io.Discard}
		var report bytes.Buffer
		require.NoError(t, run(out, 16, 200, 0, &report), "write delay %v", delay)
		require.Contains(t, report.String(), "written ")
		if delay > 0 {
			require.Positive(t, out.reports.Load(), "a slow writer makes the handler shed and say so:\n%s", report.String())
		}
	}
}
