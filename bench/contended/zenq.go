//go:build zenq

package main

import "github.com/shardedsink/shardedsink/ring/zenq"

// zenqMaxCapacity is the most slots a zenq ring holds (2^16).
const zenqMaxCapacity = 65536

// The zenq build adds the sharded sink on the zenq backend. zenq caps a ring
// at 65,536 slots and parks a writer on a full one, so instead of letting the
// burst overflow, its rows push fewer items per producer where the burst of
// the busiest shard would not fit (the caveat lists the caps).
func init() {
	im := shardedImpl("sharded-zenq", zenq.Factory[Event])
	im.maxPer = zenqMaxPer
	im.caveat = "zenq v2.8.4 through ring/zenq (benchmark only, built with -tags zenq -ldflags=-checklinkname=0): " +
		"a zenq ring holds at most 65,536 slots and a writer on a full one parks, so rows whose burst would not " +
		"fit one shard push fewer items per producer"
	extraSharded = append(extraSharded, im)
	buildFlags = "-tags zenq -ldflags=-checklinkname=0"
}

// zenqMaxPer is the largest item count per producer whose burst fits a zenq
// shard: ceil(producers/shards) * (per + per/10) + 1024 <= 65,536.
func zenqMaxPer(producers, shards int) int {
	return maxPerFor(zenqMaxCapacity, producers, shards)
}
