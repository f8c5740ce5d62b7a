#!/usr/bin/env bash
# Regenerates natssink/testdata/bench.txt, the figures behind the NATS
# section of docs/benchmarks.md, and then that section's table from it
# (TestBenchmarksDocMatchesBenchTxt checks it): 64 producers, ~195-byte
# values, an embedded server with a memory stream, natssink against
# producers that call js.Publish or js.PublishAsync themselves.
#
#	bash natssink/testdata/bench.sh            # 3 runs, about a minute on 2 cores
#	COUNT=10 bash natssink/testdata/bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."

count=${COUNT:-3}
out=testdata/bench.txt
{
	echo "# $(go env GOVERSION) $(go env GOOS)/$(go env GOARCH), GOMAXPROCS=${GOMAXPROCS:-$(nproc)}, $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg) before"
	go test -run '^$' -bench Producers -benchtime 200000x -count "$count" .
	go test -run '^$' -bench DrainPath -benchtime 200000x -count "$count" .
	echo "# end load average $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
go test -run TestBenchmarksDocMatchesBenchTxt -update .
