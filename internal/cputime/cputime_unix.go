//go:build linux || darwin || freebsd || openbsd || dragonfly || solaris

package cputime

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// thread reads CLOCK_THREAD_CPUTIME_ID, the CPU time of the calling thread.
func thread() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, fmt.Errorf("cputime: clock_gettime(CLOCK_THREAD_CPUTIME_ID): %w", err)
	}
	return time.Duration(ts.Nano()), nil
}

// process reads getrusage(RUSAGE_SELF).
func process() (time.Duration, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("cputime: getrusage(RUSAGE_SELF): %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
