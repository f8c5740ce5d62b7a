package backoff

import (
	"context"
	"time"
)

// Poll waits for cond by polling it: it calls cond, and while cond
// reports false sleeps, first for first, then for twice as long each time
// up to most, and calls it again. It returns nil once cond holds, and
// otherwise, after one last call of cond, ctx.Err() when ctx ends and
// stopErr when stop is closed (a nil stop never is). For waits that are
// not hot paths (Flush, Close): a poll costs a timer, no goroutine.
func Poll(ctx context.Context, first, most time.Duration, stop <-chan struct{}, stopErr error, cond func() bool) error {
	var t *time.Timer
	for d := first; ; d = min(2*d, most) {
		if cond() {
			return nil
		}
		if t == nil {
			t = time.NewTimer(d)
			defer t.Stop()
		} else {
			t.Reset(d)
		}
		select {
		case <-t.C:
			continue
		case <-ctx.Done():
			if cond() {
				return nil
			}
			return ctx.Err()
		case <-stop:
			if cond() {
				return nil
			}
			return stopErr
		}
	}
}
