//go:build !linux

package main

import "errors"

// realtime is Linux only; elsewhere the producers keep the default policy.
func realtime() error { return errors.New("SCHED_RR is set on Linux only") }
