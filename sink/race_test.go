//go:build race

package sink_test

// raceSlowdown is how much slower the race detector makes the code: the
// tests that bound a scheduling delay stretch their bound by it.
const raceSlowdown = 10
