//go:build race

package natsprom_test

// raceEnabled: under the race detector sync.Pool drops what is put back
// at random, so the collector's pooled snapshots allocate.
const raceEnabled = true
