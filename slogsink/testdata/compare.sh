#!/usr/bin/env bash
# compare.sh measures slogsink at an earlier revision and in this tree side
# by side: it builds the package's test binary for both (the earlier one
# with this tree's benchmark files, so that both run the same benchmarks),
# runs them in interleaved rounds, so that both see the same load, and
# prints, per benchmark and metric, each revision's median over the rounds
# and the median of the per-round ratio slogsink/sync (the two handlers of
# one run, back to back).
#
#	bash slogsink/testdata/compare.sh [-rounds N] [-bench REGEXP] [-benchtime T] [REV]
#
# REV defaults to 23f8729 (before the With rework). e.g.
#
#	bash slogsink/testdata/compare.sh -rounds 10 -bench 'With/records=0|InfoOnAChain' -benchtime 200000x
#	bash slogsink/testdata/compare.sh -rounds 5 -bench HTTP -benchtime 20000x
set -euo pipefail
cd "$(dirname "$0")/../.."

rounds=5 bench='With/records=0|InfoOnAChain' benchtime=200000x
while [ $# -gt 0 ]; do
  case "$1" in
    -rounds) rounds=$2; shift 2 ;;
    -bench) bench=$2; shift 2 ;;
    -benchtime) benchtime=$2; shift 2 ;;
    -*) echo "compare.sh: unknown flag $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
rev=${1:-23f8729}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git archive "$rev" | tar -x -C "$work" --one-top-level=old
cp slogsink/*bench_test.go "$work/old/slogsink/"
(cd "$work/old" && go test -c -o "$work/$rev.test" ./slogsink/)
go test -c -o "$work/this.test" ./slogsink/

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
for round in $(seq "$rounds"); do
  for name in "$rev" this; do
    "$work/$name.test" -test.run '^$' -test.bench "$bench" -test.benchtime "$benchtime" |
      awk -v rev="$name" -v round="$round" '/^Benchmark/ && NF >= 4 { sub(/-[0-9]+$/, "", $1); printf "%s %s %s", rev, round, $1; for (i = 3; i < NF; i += 2) printf " %s %s", $(i+1), $i; print "" }' >>"$work/runs"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"

# runs: REV ROUND NAME UNIT VALUE UNIT VALUE ...
awk -v revs="$rev this" '
function median(s,   n, i, j, t, a) {
  n = split(s, a, " ")
  for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j+1] = a[j]; a[j+1] = t }
  return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
{
  if (!($3 in seen)) { seen[$3] = 1; names[++nn] = $3 }
  for (i = 4; i < NF; i += 2) {
    if (!(($3, $i) in useen)) { useen[$3, $i] = 1; units[$3] = units[$3] " " $i }
    vals[$1, $3, $i] = vals[$1, $3, $i] " " $(i+1)
    at[$1, $2, $3, $i] = $(i+1)
  }
  rnds[$2] = 1
}
END {
  split(revs, rv, " ")
  printf "%-58s %-18s %14s %14s   %s\n", "benchmark", "metric", rv[1], rv[2], "slogsink/sync per round, median: " rv[1] " -> " rv[2]
  for (k = 1; k <= nn; k++) {
    name = names[k]
    nu = split(units[name], us, " ")
    for (u = 1; u <= nu; u++) {
      ratio = ""
      if (name ~ /handler=slogsink/) {
        peer = name; sub(/handler=slogsink/, "handler=sync", peer)
        for (r = 1; r <= 2; r++) {
          s = ""
          for (rd in rnds) if ((rv[r], rd, name, us[u]) in at && (rv[r], rd, peer, us[u]) in at && at[rv[r], rd, peer, us[u]] + 0 != 0)
            s = s " " at[rv[r], rd, name, us[u]] / at[rv[r], rd, peer, us[u]]
          q[r] = s == "" ? "-" : sprintf("%.2fx", median(s))
        }
        ratio = q[1] " -> " q[2]
      }
      printf "%-58s %-18s %14s %14s   %s\n", name, us[u], \
        (rv[1], name, us[u]) in vals ? median(vals[rv[1], name, us[u]]) : "-", \
        (rv[2], name, us[u]) in vals ? median(vals[rv[2], name, us[u]]) : "-", ratio
    }
  }
}' "$work/runs"
