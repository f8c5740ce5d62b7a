#!/usr/bin/env bash
# Regenerates slogsink/testdata/bench.txt, the figures behind the Logging
# section of docs/benchmarks.md, and then that section's table from it (the
# table is generated: TestBenchmarksDocMatchesBenchTxt checks it): the HTTP
# shape, a With, the Info call on a With chain and from 1 to 64 goroutines,
# one drain turn, the Info call with the byte budget and without, and the
# Info call on a chain with MaxDelay and without.
#
#	bash slogsink/testdata/bench.sh            # 3 runs of each
#	COUNT=10 bash slogsink/testdata/bench.sh   # for benchstat
set -euo pipefail
cd "$(dirname "$0")/../.."
count=${COUNT:-3}
out=slogsink/testdata/bench.txt
{
	echo "# $(go env GOVERSION) $(go env GOOS)/$(go env GOARCH), GOMAXPROCS=${GOMAXPROCS:-$(nproc)}, $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg) before"
	go test -run '^$' -bench 'HTTP' -benchtime 20000x -count "$count" ./slogsink/
	go test -run '^$' -bench 'With/records=0$' -benchtime 200000x -count "$count" ./slogsink/
	go test -run '^$' -bench 'InfoOnAChain' -benchtime 200000x -count "$count" ./slogsink/
	go test -run '^$' -bench 'Info$/writer=file' -count "$count" ./slogsink/
	go test -run '^$' -bench 'Info$/writer=slow' -count "$count" ./slogsink/
	go test -run '^$' -bench 'DrainTurn' -benchtime 200x -count "$count" ./logsink/
	# One run of each at a time, so that the load falls on both alike.
	for _ in $(seq "$count"); do
		go test -run '^$' -bench '^BenchmarkBytes$' -benchtime 200000x ./slogsink/
	done
	echo "# end load average $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
go test ./slogsink/ -run TestBenchmarksDocMatchesBenchTxt -update
