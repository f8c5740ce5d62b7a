//go:build linux

package main

import (
	"fmt"
	"syscall"
	"unsafe"
)

// realtime puts the calling OS thread under SCHED_RR at priority 1: Linux
// then runs it on a core of its own as soon as one runs no realtime thread
// (the realtime scheduler pushes and pulls such threads between cores at
// once), where the default policy may leave two of them on one core for
// milliseconds while the other idles. It needs root or CAP_SYS_NICE.
func realtime() error {
	const schedRR = 2
	param := struct{ priority int32 }{1}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, 0, schedRR, uintptr(unsafe.Pointer(&param))); errno != 0 {
		return fmt.Errorf("sched_setscheduler(SCHED_RR): %w", errno)
	}
	return nil
}
