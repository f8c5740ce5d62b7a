//go:build race

package promsink_test

// raceEnabled: under the race detector sync.Pool drops what is put back
// at random, so the collectors' pooled snapshots allocate.
const raceEnabled = true
