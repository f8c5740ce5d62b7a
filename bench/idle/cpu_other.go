//go:build !unix

package main

import (
	"errors"
	"time"
)

// processCPU is not implemented where there is no getrusage.
func processCPU() (time.Duration, error) {
	return 0, errors.ErrUnsupported
}
