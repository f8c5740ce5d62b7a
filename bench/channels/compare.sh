#!/usr/bin/env bash
# compare.sh builds the channel table of two or more source trees (checkouts
# of this module at different revisions) and runs them in interleaved
# rounds, so that every revision sees the same load, then prints, per case,
# the median mpmc/chan ratio of each revision over all its trials and the
# range of its per-round ratios.
#
#	bash bench/channels/compare.sh [-rounds N] [-trials N] [-items N] [-run REGEXP] DIR...
#
# e.g. bash bench/channels/compare.sh -rounds 5 -trials 7 ../shardedsink-v0.1.0 .
# Each DIR is named in the table by its last path element (. is "this").
set -euo pipefail

rounds=5 trials=7 items=10000 run=""
while [ $# -gt 0 ]; do
  case "$1" in
    -rounds) rounds=$2; shift 2 ;;
    -trials) trials=$2; shift 2 ;;
    -items) items=$2; shift 2 ;;
    -run) run=$2; shift 2 ;;
    -*) echo "compare.sh: unknown flag $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [ $# -lt 1 ]; then
  echo "usage: compare.sh [-rounds N] [-trials N] [-items N] [-run REGEXP] DIR..." >&2
  exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
names=()
for dir in "$@"; do
  name=$(basename "$(cd "$dir" && pwd)")
  [ "$dir" = "." ] && name=this
  names+=("$name")
  (cd "$dir" && go build -o "$work/$name" ./bench/channels)
done

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)" >&2
for round in $(seq "$rounds"); do
  for name in "${names[@]}"; do
    "$work/$name" -q -trials "$trials" -items "$items" -run "$run" -format benchfmt |
      awk -v rev="$name" -v round="$round" '/^BenchmarkChannels\//{print rev, round, $1, $3}' >>"$work/trials"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)" >&2

# trials: REV ROUND BenchmarkChannels/case=C/impl=I NS
awk -v revs="${names[*]}" '
function median(key,   n, i, j, t, a) {
  n = split(vals[key], a, " ")
  for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j+1] = a[j]; a[j+1] = t }
  return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
{
  split($3, p, "/"); c = substr(p[2], 6); impl = substr(p[3], 6)
  if (!(c in seen)) { seen[c] = 1; cases[++ncases] = c }
  vals[$1 SUBSEP c SUBSEP impl] = vals[$1 SUBSEP c SUBSEP impl] " " $4
  vals[$1 SUBSEP c SUBSEP impl SUBSEP $2] = vals[$1 SUBSEP c SUBSEP impl SUBSEP $2] " " $4
  rounds[$2] = 1
}
END {
  nrev = split(revs, rev, " ")
  printf "| case |"; for (r = 1; r <= nrev; r++) printf " %s mpmc/chan | %s per round |", rev[r], rev[r]; print ""
  printf "|---|"; for (r = 1; r <= nrev; r++) printf "---:|---|"; print ""
  for (k = 1; k <= ncases; k++) {
    c = cases[k]; printf "| %s |", c
    for (r = 1; r <= nrev; r++) {
      # A case one revision lacks is said so, not printed as nan.
      if (vals[rev[r] SUBSEP c SUBSEP "mpmc"] == "" || vals[rev[r] SUBSEP c SUBSEP "chan"] == "") { printf " – | not in %s |", rev[r]; continue }
      m = median(rev[r] SUBSEP c SUBSEP "mpmc"); g = median(rev[r] SUBSEP c SUBSEP "chan")
      lo = ""; hi = ""
      for (rd in rounds) {
        x = median(rev[r] SUBSEP c SUBSEP "mpmc" SUBSEP rd) / median(rev[r] SUBSEP c SUBSEP "chan" SUBSEP rd)
        if (lo == "" || x < lo) lo = x; if (hi == "" || x > hi) hi = x
      }
      printf " %.2fx | %.2f-%.2f |", m / g, lo, hi
    }
    print ""
  }
}' "$work/trials"
