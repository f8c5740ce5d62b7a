#!/usr/bin/env bash
# Regenerates promsink/testdata/bench.txt, the figures behind the
# "Metrics: what a scrape costs" section of docs/benchmarks.md, and then
# that section's table from it (TestBenchmarksDocMatchesBenchTxt checks
# it): promsink's Collect and Gather of a sink of 64 shards, sink.Stats for
# 64 shards, otelmetric's collection through the SDK's ManualReader, and the
# push cost of 64 producers with a collector gathered every 100 ms or none.
#
#	bash promsink/testdata/bench.sh            # about 2 minutes on 2 cores
#	COUNT=10 bash promsink/testdata/bench.sh   # the default: benchstat's count
set -euo pipefail
cd "$(dirname "$0")/.."

count=${COUNT:-10}
out=testdata/bench.txt
{
	echo "# $(go env GOVERSION) $(go env GOOS)/$(go env GOARCH), GOMAXPROCS=${GOMAXPROCS:-$(nproc)}, $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg) before"
	GOWORK=off go test -run '^$' -bench '^(BenchmarkCollect|BenchmarkGather|BenchmarkStats)$' -benchtime=20000x -count "$count" .
	(cd ../otelmetric && GOWORK=off go test -run '^$' -bench '^BenchmarkReaderCollect$/shards=64/per-shard=false' -benchtime=20000x -count "$count" .)
	# The pair alternates, one run each per round, so that a change in the
	# machine's load (it is shared) falls on both alike: -count would run
	# every none before every scraped.
	for _ in $(seq "$count"); do
		GOWORK=off go test -run '^$' -bench '^BenchmarkPushWhileScraped$' -benchtime=1s -count 1 . | grep '^Benchmark'
	done
	echo "# end load average $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
GOWORK=off go test -run TestBenchmarksDocMatchesBenchTxt -update .
