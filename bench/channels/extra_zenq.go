//go:build zenq

package main

// The zenq column: github.com/alphadose/zenq/v2, built with
//
//	go run -tags zenq -ldflags=-checklinkname=0 ./bench/channels
//
// zenq needs runtime link names that Go 1.23 and later no longer provide;
// importing ring/zenq supplies them (see its package documentation), and
// its adapter gives zenq the try operations that the burst rows need.
// zenq's own Write and Read serve the other rows: Write parks a writer on a
// full queue, Read busy-yields on an empty one. zenq is bounded (a power of
// two up to 2^16), so the unbounded rows have no zenq entry.

import (
	"time"

	upstream "github.com/alphadose/zenq/v2"

	"github.com/shardedsink/shardedsink/ring/zenq"
)

var extraImpls = []string{"zenq"}

func singleSupported(impl, name string) bool {
	switch impl {
	case "mpmc", "chan":
		return true
	case "zenq":
		return name == "ping-bounded1" || name == "burst-bounded1024"
	}
	return false
}

func newCrewChannelExtra(impl string, capacity, _ int) (crewChannel, bool) {
	if impl != "zenq" || capacity == 0 {
		return crewChannel{}, false
	}
	q := upstream.New[uint64](uint32(capacity))
	nop := func() {}
	return crewChannel{
		sender: func() (func(uint64), func()) {
			return func(v uint64) { q.Write(v) }, nop
		},
		receiver: func() (func() uint64, func()) {
			return func() uint64 { v, _ := q.Read(); return v }, nop
		},
		finish: nop,
	}, true
}

func pingExtra(impl string, capacity, items int) time.Duration {
	q := upstream.New[uint64](uint32(capacity))
	t0 := time.Now()
	for i := range items {
		q.Write(uint64(i))
		q.Read()
	}
	return time.Since(t0)
}

func burstExtra(impl string, n int) time.Duration {
	r := zenq.New[uint64](burst)
	t0 := time.Now()
	for range n {
		for i := range burst {
			if !r.TryPush(uint64(i)) {
				panic("zenq: burst: TryPush failed")
			}
		}
		for range burst {
			if _, ok := r.TryPop(); !ok {
				panic("zenq: burst: TryPop failed")
			}
		}
	}
	return time.Since(t0)
}
