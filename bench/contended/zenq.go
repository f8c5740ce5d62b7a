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
// instead of letting the burst overflow, its rows push fewer items per
// producer where the burst of the busiest shard would not fit (the caveat
// lists the caps).
func extraSharded[T any]() []*impl[T] {
	im := shardedImpl("sharded-zenq", zenq.Factory[T])
	im.maxPer = zenqMaxPer
	im.caveat = "zenq v2.8.4 through ring/zenq (benchmark only, built with -tags zenq -ldflags=-checklinkname=0; " +
		"the adapter serialises pushes and pops, so under contention this is zenq behind two locks): " +
		"a zenq ring holds at most 65,536 slots and a writer on a full one parks, so rows whose burst would not " +
		"fit one shard push fewer items per producer"
	return []*impl[T]{im}
}

// zenqMaxPer is the largest item count per producer whose burst fits a zenq
// shard: ceil(producers/shards) * (per + per/10) + 1024 <= 65,536.
func zenqMaxPer(producers, shards int) int {
	return maxPerFor(zenqMaxCapacity, producers, shards)
}
