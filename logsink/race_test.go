//go:build race

package logsink_test

// raceEnabled: the race detector makes sync.Pool drop buffers at random,
// so allocation counts mean nothing under it.
const raceEnabled = true
