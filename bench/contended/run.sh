#!/usr/bin/env bash
# The command for the design decision (docs/design.md, "Why sharded Vyukov rings"):
# the full method (1 to 256 producers, 5 trials of a 200 ms window each; the
# command's defaults are the quick form), measuring the contended accept path
# of every row, zenq included (which needs the build tag and linker flag
# below), in three tables: consumers
# held with 8- and 32-byte payloads, and consumers draining with 8 bytes
# (-tables; any -consumers/-payload product works too); writes each run's JSON to
# bench/contended/runs/run-N.json; and renders bench/contended/RESULTS.md,
# bench/contended/contended.svg and the generated block of docs/benchmarks.md from them
# (the tables from the last run, the stability table from all of them).
#
#   bash bench/contended/run.sh                 # one run
#   RUNS=5 bash bench/contended/run.sh          # five consecutive runs, as committed
#   bash bench/contended/run.sh -window 50ms    # extra flags go to every run, after the full method's
#
# On 2 cores the runs before the last measure the headline table alone, about
# 7 minutes each, and the last all three tables and the shed rows, about 25
# minutes: RUNS=5 takes about 55 minutes.
#
# Run it on a quiet machine: two cores shared with other jobs move the
# numbers by more than the effects they show.
set -euo pipefail
cd "$(dirname "$0")/../.."

runs="${RUNS:-1}"
dir=bench/contended/runs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -tags zenq -ldflags=-checklinkname=0 -o "$tmp/contended" ./bench/contended

mkdir -p "$dir"
rm -f "$dir"/run-*.json
# The stability over runs reads only the headline table (held, 8 bytes), and
# every other table comes from the last run: the runs before it measure the
# headline table alone.
for i in $(seq 1 "$runs"); do
	echo "== run $i of $runs, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)" >&2
	tables=held/8
	[ "$i" = "$runs" ] && tables=held/8,held/32,draining/8
	"$tmp/contended" -producers 1,4,16,64,128,256 -trials 5 -window 200ms -tables "$tables" -format json -o "$dir/run-$i.json" "$@"
done

from="$dir/run-*.json"
"$tmp/contended" -from "$from" -format markdown -o bench/contended/RESULTS.md
"$tmp/contended" -from "$from" -format svg -o bench/contended/contended.svg
"$tmp/contended" -from "$from" -format readme -o docs/benchmarks.md
"$tmp/contended" -from "$from" -format headline -o README.md
echo "== wrote $dir, bench/contended/RESULTS.md, bench/contended/contended.svg, the generated block in docs/benchmarks.md and README.md's headline table" >&2
