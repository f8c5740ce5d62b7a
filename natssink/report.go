package natssink

import (
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// reportInterval is the least time between two OnError calls.
const reportInterval = time.Second

// reporter collects the failures and hands them to OnError at most once
// per reportInterval, from the retry goroutine (and a last time from
// Shutdown).
type reporter struct {
	poke    func()
	onError func(error)
	name    string
	logger  *slog.Logger

	mu       sync.Mutex
	pending  uint64 // failures not yet reported
	last     error  // the reason of the latest failure
	reported int64  // when the last report was made (ns since the epoch); valid if made
	made     bool
}

// record notes n failures for the same reason and pokes the retry
// goroutine, which reports them when the interval allows.
func (r *reporter) record(n uint64, reason error) {
	r.mu.Lock()
	r.pending += n
	r.last = reason
	r.mu.Unlock()
	r.poke()
}

// lastError returns the reason of the latest failure, or nil.
func (r *reporter) lastError() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// untilDue returns how long until a pending report may be made: 0 when it
// may be made now, -1 when nothing is pending.
func (r *reporter) untilDue(now int64) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.pending == 0:
		return -1
	case !r.made:
		return 0
	default:
		return max(0, time.Duration(r.reported+int64(reportInterval)-now))
	}
}

// deliver makes a report of the pending failures if there are any and the
// interval has passed since the last report (or force is set).
func (r *reporter) deliver(now int64, force bool) {
	r.mu.Lock()
	if r.pending == 0 || (!force && r.made && now-r.reported < int64(reportInterval)) {
		r.mu.Unlock()
		return
	}
	n, last := r.pending, r.last
	r.pending, r.reported, r.made = 0, now, true
	r.mu.Unlock()
	err := &FailureReport{Sink: r.name, Failed: n, Last: last}
	if r.onError != nil {
		defer func() {
			if p := recover(); p != nil {
				r.log().Error("natssink: OnError panicked", "sink", r.name, "panic", p, "report", err)
			}
		}()
		r.onError(err)
		return
	}
	r.log().Error("natssink: values failed", "sink", r.name, "failed", n, "err", last)
}

func (r *reporter) log() *slog.Logger {
	if r.logger != nil {
		return r.logger
	}
	return slog.Default()
}

// FailureReport is the error that OnError receives: the values that failed
// since the previous report, and the reason of the last of them, which it
// wraps (errors.Is(report, natssink.ErrAckTimeout), errors.As(report,
// &apiErr) and so on look at that reason).
type FailureReport struct {
	Sink   string // the sink's Name
	Failed uint64 // values that failed since the previous report
	Last   error  // the reason of the last one
}

func (r *FailureReport) Error() string {
	return fmt.Sprintf("natssink %s: %d value(s) failed since the last report; the last: %v", r.Sink, r.Failed, r.Last)
}

func (r *FailureReport) Unwrap() error { return r.Last }
