//go:build zenq && race

package zenq_test

const raceEnabled = true
