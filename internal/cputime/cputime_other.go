//go:build !(linux || darwin || freebsd || openbsd || dragonfly || solaris)

package cputime

import "time"

// thread reports that this platform has no per-thread CPU clock that
// golang.org/x/sys/unix exposes.
func thread() (time.Duration, error) {
	return 0, ErrUnsupported
}
