//go:build race

package natssink

const raceEnabled = true
