package slogsink_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardedsink/shardedsink/slogsink"
)

// update makes the tests that check generated files (the fuzz seeds, the
// table in docs/benchmarks.md) rewrite them instead.
var update = flag.Bool("update", false, "rewrite the generated files that the drift tests check")

// TestMain fails the package if a test leaves a goroutine behind: every
// handler a test makes is closed, and Close must stop its workers.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// writes records each Write separately. When gate is set, every Write waits
// for it to be closed first; when fail is set, every Write fails with it.
type writes struct {
	mu   sync.Mutex
	all  [][]byte
	gate chan struct{}
	fail error
}

func (w *writes) Write(p []byte) (int, error) {
	if w.gate != nil {
		<-w.gate
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fail != nil {
		return 0, w.fail
	}
	w.all = append(w.all, bytes.Clone(p))
	return len(p), nil
}

// count returns the number of Writes so far.
func (w *writes) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.all)
}

// lines returns every line written so far, in order.
func (w *writes) lines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, p := range w.all {
		sc := bufio.NewScanner(bytes.NewReader(p))
		for sc.Scan() {
			out = append(out, sc.Text())
		}
	}
	return out
}

// line is one JSON record as written, the fields the tests look at.
type line struct {
	Level   string `json:"level"`
	Msg     string `json:"msg"`
	G       int    `json:"g"`
	I       int    `json:"i"`
	Dropped uint64 `json:"dropped"`
}

// parse decodes every line, failing the test on one that is not a whole
// JSON object.
func parse(t *testing.T, lines []string) []line {
	t.Helper()
	out := make([]line, len(lines))
	for k, l := range lines {
		require.NoError(t, json.Unmarshal([]byte(l), &out[k]), "line %d: %q", k, l)
	}
	return out
}

// tally splits parsed lines into records and the sum of the dropped
// attributes of the drop reports.
func tally(ls []line) (records int, reported uint64) {
	for _, l := range ls {
		if l.Msg == slogsink.DroppedMessage {
			reported += l.Dropped
		} else {
			records++
		}
	}
	return records, reported
}

// newHandler makes a handler and closes it when the test ends.
func newHandler(t *testing.T, w *writes, opts *slogsink.Options) *slogsink.Handler {
	t.Helper()
	h, err := slogsink.New(w, opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		if w.gate != nil {
			select {
			case <-w.gate:
			default:
				close(w.gate)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, h.Close(ctx))
	})
	return h
}

var errDiskFull = errors.New("disk full")

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// jsonUnmarshal decodes the fields of line named in into into their
// targets.
func jsonUnmarshal(l string, into map[string]any) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(l), &raw); err != nil {
		return err
	}
	for k, dst := range into {
		if err := json.Unmarshal(raw[k], dst); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}
