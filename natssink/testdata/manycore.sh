#!/usr/bin/env bash
# The NATS table on a machine of many cores (docs/benchmarks.md, the block
# natssink-manycore): BenchmarkProducers at GOMAXPROCS=16 and at 4 on the
# same machine, into testdata/bench-16core.txt and
# testdata/bench-16core-procs4.txt. A lent machine may have no Go: build the
# test binary where Go is and pass it in BIN.
#
#	cd natssink && go test -c -o /tmp/natssink.test . && BIN=/tmp/natssink.test bash testdata/manycore.sh
#	go test -run TestBenchmarksDocMatchesBenchTxt -update .   # back where Go is
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${BIN:?the natssink test binary (go test -c)}
gover=${GOVERSION:-$(go env GOVERSION 2>/dev/null || echo "go?")}
for procs in 16 4; do
	out=testdata/bench-16core.txt
	[ "$procs" = 16 ] || out=testdata/bench-16core-procs$procs.txt
	{
		echo "# $gover linux/amd64, $(nproc) cores, GOMAXPROCS=$procs, $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg) before"
		GOMAXPROCS=$procs "$bin" -test.run '^$' -test.bench Producers -test.benchtime 200000x -test.count "${COUNT:-5}"
		GOMAXPROCS=$procs "$bin" -test.run '^$' -test.bench DrainPath -test.benchtime 200000x -test.count 3
		echo "# end load average $(cut -d' ' -f1-3 /proc/loadavg)"
	} 2>&1 | tee "$out"
done
