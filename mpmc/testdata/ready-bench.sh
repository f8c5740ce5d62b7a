#!/usr/bin/env bash
# ready-bench.sh runs the readiness benchmarks of mpmc (BenchmarkReadyWakeup,
# and the try and wait paths with and without readiness armed) and writes
# mpmc/testdata/ready-bench.txt, from which TestReadyBenchDocMatchesBenchTxt
# renders the "mpmc-ready" block of docs/benchmarks.md; it then rewrites
# that block. Run it from anywhere; -count is 5 unless COUNT says otherwise.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=mpmc/testdata/ready-bench.txt
count=${COUNT:-5}
{
  echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -sr) $(go env GOVERSION) GOMAXPROCS=$(nproc) load $(cut -d' ' -f1-3 /proc/loadavg)"
  go test -run '^$' -bench 'ReadyWakeup' -benchtime=5000x -count="$count" ./mpmc/
  go test -run '^$' -bench 'TryPath/(Bounded|Bounded_ready|Unbounded)$|WaitPath/(Bounded|Bounded_ready|Unbounded)$' -benchtime=2000000x -count="$count" ./mpmc/
  echo "# end load $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
go test ./mpmc/ -run TestReadyBenchDocMatchesBenchTxt -update
