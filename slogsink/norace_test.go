//go:build !race

package slogsink_test

const raceEnabled = false
