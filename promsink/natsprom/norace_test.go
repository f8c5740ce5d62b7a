//go:build !race

package natsprom_test

const raceEnabled = false
