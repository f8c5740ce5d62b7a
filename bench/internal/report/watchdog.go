package report

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"time"
)

// Watchdog fails a run loudly when one of its rows hangs: a row that has
// not finished within Limit gets its name and every goroutine's stack
// written to Out, and the process exits with status 3. Rows already written
// to an -o file stay there. A zero Limit turns the watchdog off.
//
// A hung row cannot be stopped from outside (its goroutines may be parked
// for good, as zenq's are when several readers stall), so exiting is the
// only way to end the run; the stacks show where it stuck.
type Watchdog struct {
	Limit time.Duration
	// Out receives the report; nil means os.Stderr.
	Out io.Writer
	// Exit ends the process; nil means os.Exit. Tests replace it.
	Exit func(code int)
}

// HungExitCode is the exit status of a run that a watchdog ended.
const HungExitCode = 3

// Do runs fn, the row called name, on the calling goroutine, and fires if
// fn has not returned within Limit.
func (w *Watchdog) Do(name string, fn func() error) error {
	if w == nil || w.Limit <= 0 {
		return fn()
	}
	t := time.AfterFunc(w.Limit, func() { w.fire(name) })
	defer t.Stop()
	return fn()
}

func (w *Watchdog) fire(name string) {
	out := w.Out
	if out == nil {
		out = os.Stderr
	}
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	fmt.Fprintf(out, "\nWATCHDOG: %s did not finish within %v: it hangs; the run fails. Goroutines:\n\n%s\n", name, w.Limit, buf)
	exit := w.Exit
	if exit == nil {
		exit = os.Exit
	}
	exit(HungExitCode)
}
