package sink

import "testing"

// BenchmarkGroups runs the contended harness with twice as many shards as
// the CPUs the process may run on (4 on 2 CPUs), 8-byte values: with CPU
// homes each CPU then owns a group of two shards (see cpuHomeTable), and
// the handle-less push is compared with the handle push at the same shard
// count (issue 36's goal: within 1.3x at 64 producers).
//
//	go test -run '^$' -bench Groups -benchtime 2000000x -count 10 ./sink/ | tee groups.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl -filter '.unit:cpu-ns/op' groups.txt
func BenchmarkGroups(b *testing.B) {
	twice := func(c *Config[uint64]) { c.Shards = min(2*len(homeCPUs()), MaxShards) }
	impls := []pushImpl[uint64]{
		{name: "Handle.Push(shards=2xCPUs)", cfg: twice, setup: handlePush[uint64]},
		{name: "Sink.Push(shards=2xCPUs)", cfg: twice, setup: sinkPush[uint64]},
	}
	for _, held := range []bool{true, false} {
		b.Run(consumersName(held), func(b *testing.B) {
			benchImpls(b, held, "payload=8", impls)
		})
	}
}
