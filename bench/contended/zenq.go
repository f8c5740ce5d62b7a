//go:build zenq

package main

import "github.com/shardedsink/shardedsink/ring/zenq"

// buildFlags are the go command flags the binary was built with, for the
// command line recorded with the results.
const buildFlags = "-tags zenq -ldflags=-checklinkname=0"

// zenqMaxCapacity is the most slots a zenq ring holds (2^16).
const zenqMaxCapacity = 65536

// extraSharded is, in the zenq build, the sharded sink on the zenq backend.
// zenq caps a ring at 65,536 slots and parks a writer on a full one, so
// instead of letting a round overflow, its rows play rounds that fit one
// ring (the caveat says so).
func extraSharded[T any]() []*impl[T] {
	im := shardedImpl("sharded-zenq", zenq.Factory[T])
	im.maxRound = zenqMaxCapacity - slack
	im.caveat = "zenq v2.8.4 through ring/zenq (benchmark only, built with -tags zenq -ldflags=-checklinkname=0; " +
		"the adapter serialises pushes and pops, so under contention this is zenq behind two locks): " +
		"a zenq ring holds at most 65,536 slots and a writer on a full one parks, so its rounds are shorter"
	return []*impl[T]{im}
}
