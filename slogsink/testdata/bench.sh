#!/usr/bin/env bash
# Regenerates slogsink/testdata/bench.txt, the figures behind the package
# doc's tables: the HTTP shape, the Info call, and one drain turn.
#
#	bash slogsink/testdata/bench.sh            # 3 runs of each
#	COUNT=10 bash slogsink/testdata/bench.sh   # for benchstat
set -euo pipefail
cd "$(dirname "$0")/../.."
count=${COUNT:-3}
out=slogsink/testdata/bench.txt
{
	echo "# $(date -u +%FT%TZ) $(go version) GOMAXPROCS=${GOMAXPROCS:-$(nproc)} load: $(cut -d' ' -f1-3 /proc/loadavg)"
	go test -run '^$' -bench 'HTTP' -benchtime 20000x -count "$count" ./slogsink/
	go test -run '^$' -bench 'Info/writer=file' -count "$count" ./slogsink/
	go test -run '^$' -bench 'Info/writer=slow' -count "$count" ./slogsink/
	go test -run '^$' -bench 'DrainTurn' -benchtime 200x -count "$count" ./slogsink/
	echo "# end load: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
