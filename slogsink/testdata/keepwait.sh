#!/usr/bin/env bash
# Regenerates slogsink/testdata/keepwait.txt, the figures behind
# DefaultKeepWait (docs/benchmarks.md, "Logging: what KeepWait saves a
# burst"), and then that section's table from it (the table is generated:
# TestKeepWaitDocMatchesKeepWaitTxt checks it): a burst of Error records
# into a slow destination that keeps draining, and the stalled-pipe probe,
# with KeepWait off, 1 ms and 10 ms.
#
#	bash slogsink/testdata/keepwait.sh            # 5 bursts, 3 probes of each
#	COUNT=10 bash slogsink/testdata/keepwait.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
count=${COUNT:-3}
out=slogsink/testdata/keepwait.txt
{
	echo "# $(go env GOVERSION) $(go env GOOS)/$(go env GOARCH), GOMAXPROCS=${GOMAXPROCS:-$(nproc)}, $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg) before"
	go test -run '^$' -bench 'KeepWaitBurst' -benchtime 1x -count "$((count + 2))" ./slogsink/
	go test -run '^$' -bench 'KeepWait$' -benchtime 1x -count "$count" ./slogsink/
	echo "# end load average $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
go test ./slogsink/ -run TestKeepWaitDocMatchesKeepWaitTxt -update
