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
// per reportInterval, and a last time at Shutdown. OnError runs on a
// goroutine of its own (the deliverer), so an OnError that blocks delays
// only the reports: while it runs, failures accumulate into the next one.
type reporter struct {
	poke    func()
	onError func(error)
	name    string
	logger  *slog.Logger

	mu       sync.Mutex
	pending  uint64 // failures not yet reported
	last     error  // the reason of the latest failure
	lastGen  uint64 // how many times last was set
	text     string // last.Error(), as of when last had been set textGen times
	textGen  uint64
	reported int64 // when the last report was made (ns since the epoch); valid if made
	made     bool
	busy     bool // the deliverer has a report it has not finished with

	stopping bool // finish has begun: the deliverer delivers what is pending and exits

	work     chan *FailureReport // to the deliverer: one at a time (busy)
	quit     chan struct{}       // closed by finish when nothing is pending and the deliverer is free
	done     chan struct{}       // closed when the deliverer has exited
	quitOnce sync.Once
}

// start starts the deliverer (again, for a Shutdown after one whose ctx
// ended: it stopped the first). The caller holds mu, or is New.
func (r *reporter) start() {
	r.work, r.quit, r.done = make(chan *FailureReport, 1), make(chan struct{}), make(chan struct{})
	r.quitOnce = sync.Once{}
	go r.deliverer(r.work, r.quit, r.done)
}

func (r *reporter) deliverer(work <-chan *FailureReport, quit, done chan struct{}) {
	defer close(done)
	for {
		var rep *FailureReport
		select {
		case rep = <-work:
		case <-quit:
			return
		}
		r.report(rep)
		r.mu.Lock()
		r.busy = false
		if r.stopping {
			// finish is waiting: deliver the rest, then exit.
			if r.pending == 0 {
				r.mu.Unlock()
				return
			}
			r.work <- r.takeLocked(r.reported)
			r.mu.Unlock()
			continue
		}
		more := r.pending > 0
		r.mu.Unlock()
		if more {
			r.poke() // the retry goroutine times the next report
		}
	}
}

// takeLocked makes a report of the pending failures and marks the
// deliverer busy with it. The caller holds mu.
func (r *reporter) takeLocked(now int64) *FailureReport {
	rep := &FailureReport{Sink: r.name, Failed: r.pending, Last: r.last}
	r.pending, r.reported, r.made, r.busy = 0, now, true, true
	return rep
}

// record notes n failures for the same reason and pokes the retry
// goroutine, which reports them when the interval allows.
func (r *reporter) record(n uint64, reason error) {
	r.mu.Lock()
	r.pending += n
	r.last = reason
	r.lastGen++
	r.mu.Unlock()
	r.poke()
}

// lastErrorText returns the text of the latest failure's reason, or "".
// It calls the reason's Error at most once per failure recorded, so that
// reading it again, as every Stats does, allocates nothing while no new
// failure comes. (The cache is keyed by a count, not by the error: errors
// need not be comparable.)
func (r *reporter) lastErrorText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		return ""
	}
	if r.textGen != r.lastGen {
		r.text, r.textGen = r.last.Error(), r.lastGen
	}
	return r.text
}

// untilDue returns how long until a pending report may be made: 0 when it
// may be made now, -1 when nothing is pending or the deliverer is busy
// (it pokes the retry goroutine when it is done).
func (r *reporter) untilDue(now int64) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.pending == 0 || r.busy:
		return -1
	case !r.made:
		return 0
	default:
		return max(0, time.Duration(r.reported+int64(reportInterval)-now))
	}
}

// deliver hands the deliverer a report of the pending failures if there
// are any, it is free, finish has not begun, and the interval has passed
// since the last report (or force is set). It never waits.
func (r *reporter) deliver(now int64, force bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == 0 || r.busy || r.stopping || (!force && r.made && now-r.reported < int64(reportInterval)) {
		return
	}
	r.work <- r.takeLocked(now) // never blocks: the deliverer is free and work empty
}

// finish delivers what is pending (at once, whatever the interval) and
// stops the deliverer, waiting for it until stop is closed. It reports
// whether every report was delivered and the deliverer has exited; when
// OnError blocks, it has not, and the deliverer delivers the rest and
// exits once OnError returns.
func (r *reporter) finish(now int64, stop <-chan struct{}) bool {
	r.mu.Lock()
	select {
	case <-r.done: // an earlier finish stopped it
		if r.pending == 0 {
			r.mu.Unlock()
			return true
		}
		r.start()
	default:
	}
	r.stopping = true
	done := r.done
	switch {
	case r.busy: // the deliverer sees stopping when it is done
	case r.pending > 0:
		r.work <- r.takeLocked(now)
	default:
		r.quitOnce.Do(func() { close(r.quit) })
	}
	r.mu.Unlock()
	select {
	case <-done:
		return true
	case <-stop:
		return false
	}
}

// report hands rep to OnError, or logs it, recovering a panic.
func (r *reporter) report(rep *FailureReport) {
	if r.onError == nil {
		r.log().Error("natssink: values failed", "sink", r.name, "failed", rep.Failed, "err", rep.Last)
		return
	}
	defer func() {
		if p := recover(); p != nil {
			r.log().Error("natssink: OnError panicked", "sink", r.name, "panic", p, "report", rep)
		}
	}()
	r.onError(rep)
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
