//go:build !race

package promsink_test

const raceEnabled = false
