#!/usr/bin/env bash
# Regenerates otelsink/testdata/bench.txt, the figures behind README.md's
# "Measured against the SDK's batch processors", and then that section's
# table from it (TestMeasuredTableMatchesBenchTxt checks it): whole spans
# through a TracerProvider at 1 and 64 goroutines, OnEnd on spans made once
# at 64, and the log processors' OnEmit at 1, 16 and 64, both processors
# side by side, on locked OS threads with a no-op exporter.
#
#	bash otelsink/testdata/bench.sh            # 5 runs of each, under a minute on 2 cores
#	COUNT=10 bash otelsink/testdata/bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."

count=${COUNT:-5}
out=testdata/bench.txt
{
	echo "# $(go env GOVERSION) $(go env GOOS)/$(go env GOARCH), GOMAXPROCS=${GOMAXPROCS:-$(nproc)}, $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg) before"
	go test -run '^$' -bench 'ExportedShare/g=(1|64)/impl=(bsp|otelsink)$' -benchtime=10000x -count "$count" .
	go test -run '^$' -bench 'OnEndThreads/exporter=noop/g=64/impl=(bsp|otelsink)$' -benchtime=10000x -count "$count" .
	go test -run '^$' -bench 'OnEmitThreads/g=(1|16|64)/impl=(batchprocessor|otelsink)$' -benchtime=10000x -count "$count" .
	echo "# end load average $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
go test -run TestMeasuredTableMatchesBenchTxt -update .
