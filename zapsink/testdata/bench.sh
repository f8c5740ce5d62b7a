#!/usr/bin/env bash
# Regenerates zapsink/testdata/bench.txt, the figures behind the "zapsink" block
# of docs/benchmarks.md, and then that block from it (the block is
# generated: TestBenchmarksDocMatchesBenchTxt checks it): the issue's
# stalled-pipe probe, a healthy file (1 to 256 goroutines), a busy process, an
# offered rate beside busy cores, the caller's cost into io.Discard and the
# idle CPU, for zapsink and zap's own loggers side by side in one run.
#
#	bash zapsink/testdata/bench.sh            # 3 runs of each probe
#	COUNT=5 bash zapsink/testdata/bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
count=${COUNT:-3}
out=testdata/bench.txt
export GOWORK=off
{
	echo "# $(go env GOVERSION) $(go env GOOS)/$(go env GOARCH), GOMAXPROCS=${GOMAXPROCS:-$(nproc)}, $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg) before"
	# The probes run in rounds, every logger once a round, so that each
	# logger's run i meets the machine of round i: the VM's placement of
	# its cores and its neighbours' load drift over minutes, and a
	# logger's runs taken one after the other (-count) would meet one
	# state where its rival's met another. The front page pairs the
	# healthy-file runs round by round (bench/frontpage, fileRatio).
	for ((round = 0; round < count; round++)); do
		go test -run '^$' -bench '^(BenchmarkStalledPipe|BenchmarkFile|BenchmarkBusy|BenchmarkOffered)$' -benchtime 1x -count 1 . 2>/dev/null
	done
	go test -run '^$' -bench 'Discard' -benchtime 500000x -count "$count" .
	go test -run '^$' -bench 'Idle' -benchtime 1x -count 1 .
	echo "# end load average $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
go test . -run TestBenchmarksDocMatchesBenchTxt -update
