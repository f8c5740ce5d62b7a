#!/usr/bin/env bash
# The idle measurements of docs/benchmarks.md ("Idle workers"): each
# configuration of bench/idle, 3 trials, into bench/idle/runs/NN-name.json
# (the number orders the table), then the generated block of
# docs/benchmarks.md from them. About 4 minutes on 2 cores; run it on a
# quiet machine (the pickup latency of a busy producer needs a second core).
#
#   bash bench/idle/run.sh
#   bash bench/idle/run.sh -trials 5      # extra flags go to every configuration
set -euo pipefail
cd "$(dirname "$0")/../.."

dir=bench/idle/runs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/idle" ./bench/idle
mkdir -p "$dir"
rm -f "$dir"/*.json

i=0
measure() {
	i=$((i + 1))
	local name=$1
	shift
	echo "== $name, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)" >&2
	"$tmp/idle" -trials 3 -format json -o "$(printf '%s/%02d-%s.json' "$dir" "$i" "$name")" "$@" "${extra[@]}"
}
extra=("$@")
measure wake-default-block
measure wake-default-busy -producer busy
measure wake-8-block -shards 8
measure poll-default-block -mode poll
measure poll-default-busy -mode poll -producer busy
measure poll-8-block -mode poll -shards 8
measure wake-default-maxdelay -max-delay 100ms
measure trickle-wake -rate 1000
measure trickle-wake-maxdelay -rate 1000 -max-delay 100ms

"$tmp/idle" -from "$dir/*.json" -format readme -o docs/benchmarks.md
echo "== wrote $dir and the generated block in docs/benchmarks.md" >&2
