#!/usr/bin/env bash
# Regenerates sink/testdata/handoff.txt, the figures of docs/benchmarks.md's
# "What a push waits for" (issue 62's matrix), and then that section's
# table from it (TestHandOffDocMatchesHandOffTxt checks it): what a push
# waits for behind slow, spinning and stalled destinations, on idle cores
# and with two goroutines keeping both busy, with the hand-off on and off
# side by side in each run; and the starved rows, where the hand-off
# parks: 256 producers on locked threads into a no-op Drain, and 64
# goroutines logging into a healthy file through zapsink and zerologsink
# against their synchronous loggers, and their stalled pipes.
#
#	bash sink/testdata/handoff.sh            # 3 runs of each
#	COUNT=5 bash sink/testdata/handoff.sh
#
# Take it on a quiet machine (load average below 1); the header and the
# end line record the load.
set -euo pipefail
cd "$(dirname "$0")/../.."
count=${COUNT:-3}
out=sink/testdata/handoff.txt
{
	echo "# $(go env GOVERSION) $(go env GOOS)/$(go env GOARCH), GOMAXPROCS=${GOMAXPROCS:-$(nproc)}, $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg) before"
	go test -run '^$' -bench '^BenchmarkSlowDestination$' -benchtime 1x -count "$count" ./sink/
	go test -run '^$' -bench '^BenchmarkStarved$' -benchtime 1x -count "$count" ./sink/
	(cd zapsink && go test -run '^$' -bench '^BenchmarkFile$/logger=(zapsink-Core|zap-AddSync|zap-BufferedWriteSyncer)/goroutines=64$' -benchtime 1x -count "$count" .)
	(cd zapsink && go test -run '^$' -bench '^BenchmarkStalledPipe$/logger=(zapsink-Core|zap-AddSync)$' -benchtime 1x -count "$count" .)
	(cd zerologsink && go test -run '^$' -bench '^BenchmarkFile$/logger=(zerologsink|zerolog)/goroutines=64$' -benchtime 1x -count "$count" .)
	(cd zerologsink && go test -run '^$' -bench '^BenchmarkStalledPipe$/logger=(zerologsink|zerolog)$' -benchtime 1x -count "$count" .)
	echo "# end load average $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
go test ./sink/ -run TestHandOffDocMatchesHandOffTxt -update
