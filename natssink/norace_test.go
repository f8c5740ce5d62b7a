//go:build !race

package natssink

const raceEnabled = false
