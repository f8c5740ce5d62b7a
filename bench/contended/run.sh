#!/usr/bin/env bash
# The command for the design decision (docs/design.md, "The decision and its
# method"): the full method (1 to 256 producers, 5 trials of a 200 ms window
# each; the command's defaults are the quick form), measuring the contended
# accept path of every row, zenq included (which needs the build tag and
# linker flag below). RUNS runs of the headline table (consumers held,
# 8-byte values) go to bench/contended/runs/run-N.json, for the stability
# over runs; one run of the other tables (held with 32-byte values, draining
# with 8-byte values) and of the shed path goes to runs/tables.json. Then it
# renders bench/contended/RESULTS.md, bench/contended/contended.svg, the
# generated block of docs/benchmarks.md and README.md's table from them.
#
#   bash bench/contended/run.sh                 # one headline run, then the other tables
#   RUNS=3 bash bench/contended/run.sh          # three headline runs, then the other tables, as committed
#   RUNS=3 TABLES=no bash bench/contended/run.sh     # the headline runs only; keeps the committed tables.json
#   TABLES=only bash bench/contended/run.sh     # the other tables only; keeps the committed headline runs
#   bash bench/contended/run.sh -window 50ms    # extra flags go to every run, after the full method's
#
# On 2 cores a headline run takes about 5 minutes and the other tables about
# 11, with a minute's wait for quiet before each: RUNS=3 takes about 30 minutes.
#
# Run it on a quiet machine: two cores shared with other jobs move the
# numbers by more than the effects they show.
set -euo pipefail
cd "$(dirname "$0")/../.."

runs="${RUNS:-1}"
tables="${TABLES:-yes}"
case "$tables" in yes | no | only) ;; *) echo "TABLES must be yes, no or only, not $tables" >&2; exit 2 ;; esac
dir=bench/contended/runs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -tags zenq -ldflags=-checklinkname=0 -o "$tmp/contended" ./bench/contended

# The harness is the load: its producer threads push the load average past 2
# on 2 cores. Before each run it waits for the 1-minute average to fall
# below 1 again (about a minute; at most 5, then it goes on and the load it
# prints says so), so that every run starts quiet.
quiet() {
	for _ in $(seq 60); do
		awk '{exit !($1 < 1)}' /proc/loadavg 2>/dev/null && return
		sleep 5
	done
}

mkdir -p "$dir"
full=(-producers 1,4,16,64,128,256 -trials 5 -window 200ms -format json)
if [ "$tables" != only ]; then
	rm -f "$dir"/run-*.json
	for i in $(seq 1 "$runs"); do
		quiet
		echo "== headline run $i of $runs, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)" >&2
		"$tmp/contended" "${full[@]}" -tables held/8 -shed=false -o "$dir/run-$i.json" "$@"
	done
fi
if [ "$tables" != no ]; then
	quiet
	echo "== the other tables and the shed path, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)" >&2
	"$tmp/contended" "${full[@]}" -tables draining/8,held/32 -o "$dir/tables.json" "$@"
fi

from="$dir/*.json"
"$tmp/contended" -from "$from" -format markdown -o bench/contended/RESULTS.md
"$tmp/contended" -from "$from" -format svg -o bench/contended/contended.svg
"$tmp/contended" -from "$from" -format readme -o docs/benchmarks.md
"$tmp/contended" -from "$from" -format headline -o README.md
echo "== wrote $dir, bench/contended/RESULTS.md, bench/contended/contended.svg, the generated block in docs/benchmarks.md and README.md's table" >&2
