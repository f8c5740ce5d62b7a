#!/usr/bin/env bash
# What the byte budget of sink (Config.MaxQueuedBytes) costs a push, and
# that a sink without one pushes as before it existed:
#
#   bash bench/pushcost/budget.sh                 # -count 10: about 10 minutes on 2 quiet cores
#   COUNT=3 PRODUCERS='(1|64)' bash bench/pushcost/budget.sh   # a shorter look
#
# 1. sink's BenchmarkContended, rows Handle.Push and Sink.Push (workers held,
#    8-byte values), from two test binaries: one built from BASE (23f8729,
#    the tree before the budget) and one from this tree, run one after the
#    other COUNT times, so that both see the same machine; benchstat
#    compares them (the goal: within 2 %).
# 2. sink's BenchmarkBudget from this tree: the same pushes with a byte
#    budget, per shard (as shipped) and with one counter for the sink (the
#    alternative), next to the pushes without one; benchstat by row (the
#    goal: at most 1.3x).
#
# Raw benchfmt files stay in OUT (default: a new temporary folder), named
# old.txt, new.txt and budget.txt. Needs git and the Go module proxy (for
# benchstat).
set -euo pipefail
cd "$(dirname "$0")/../.."

base=${BASE:-23f8729}
count=${COUNT:-10}
producers=${PRODUCERS:-'(1|4|16|64|256)'}
out=${OUT:-$(mktemp -d)}
benchstat="go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"

mkdir -p "$out/old"
git archive "$base" | tar -x -C "$out/old"
(cd "$out/old" && GOWORK=off go test -c -o "$out/old.test" ./sink/)
GOWORK=off go test -c -o "$out/new.test" ./sink/

echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/old.txt" "$out/new.txt" >/dev/null
contended="Contended/consumers=held/payload=8/impl=(Handle.Push|Sink.Push)$/producers=$producers\$"
for i in $(seq "$count"); do
  echo "budget.sh: run $i of $count" >&2
  (cd sink && "$out/old.test" -test.run '^$' -test.bench "$contended" -test.benchtime 2000000x) >>"$out/old.txt"
  (cd sink && "$out/new.test" -test.run '^$' -test.bench "$contended" -test.benchtime 2000000x) >>"$out/new.txt"
done
(cd sink && "$out/new.test" -test.run '^$' -test.bench "Budget/consumers=held/payload=8/impl=.*/producers=$producers\$" \
  -test.benchtime 2000000x -test.count "$count") >"$out/budget.txt"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/old.txt" "$out/budget.txt" >/dev/null

echo "## no budget: $base against this tree (cpu-ns per accepted push)"
$benchstat -filter '.unit:cpu-ns/op' "$out/old.txt" "$out/new.txt"
echo
echo "## a budget set (BenchmarkBudget, cpu-ns per accepted push)"
$benchstat -col /impl -filter '.unit:cpu-ns/op' "$out/budget.txt"
echo
echo "raw files in $out"
