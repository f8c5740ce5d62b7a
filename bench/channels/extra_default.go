//go:build !zenq

package main

import "time"

// Without the zenq build tag there are only the two implementations that
// every build has.

var extraImpls []string

func newCrewChannelExtra(string, int, int) (crewChannel, bool) { return crewChannel{}, false }

func singleSupported(impl, _ string) bool { return impl == "mpmc" || impl == "chan" }

func pingExtra(string, int, int) time.Duration { return 0 }

func burstExtra(string, int) time.Duration { return 0 }
