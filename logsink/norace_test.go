//go:build !race

package logsink_test

const raceEnabled = false
