//go:build !unix

package natssink_test

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
