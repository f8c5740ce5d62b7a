//go:build !(linux || darwin || freebsd || openbsd || dragonfly || solaris)

package cputime

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

// thread reports that this platform has no per-thread CPU clock that
// golang.org/x/sys/unix exposes.
func thread() (time.Duration, error) {
	return 0, ErrUnsupported
}

// process reports that this platform has no getrusage.
func process() (time.Duration, error) {
	return 0, fmt.Errorf("cputime: no getrusage on %s/%s: %w", runtime.GOOS, runtime.GOARCH, errors.ErrUnsupported)
}
