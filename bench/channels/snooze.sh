#!/usr/bin/env bash
# snooze.sh measures the spin count of internal/backoff's Snooze (how many
# steps a wait for another goroutine's claimed slot spins before it yields
# with runtime.Gosched): it copies this tree once per count, with
# snoozeSpins set to it, and runs the channel table's crews (the rows where
# goroutines wait for each other) of every copy in interleaved rounds with
# compare.sh. The copies are named s<count>.
#
#	bash bench/channels/snooze.sh [-spins "0 2 4 7 10"] [compare.sh flags]
#
# e.g. bash bench/channels/snooze.sh -spins "2 4 7" -rounds 9 -trials 3
# Extra DIRs after the flags (an older checkout, say) join the comparison.
set -euo pipefail
cd "$(dirname "$0")/../.."

spins="0 2 4 7 10"
if [ "${1:-}" = "-spins" ]; then
  spins=$2
  shift 2
fi
flags=() dirs=()
while [ $# -gt 0 ]; do
  case "$1" in
    -rounds | -trials | -items | -run) flags+=("$1" "$2"); shift 2 ;;
    -*) echo "snooze.sh: unknown flag $1" >&2; exit 2 ;;
    *) dirs+=("$1"); shift ;;
  esac
done
# The crews by default; a -run given later wins.
flags=(-run 'goroutines|threads' "${flags[@]}")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
file=internal/backoff/backoff.go
grep -q '^	snoozeSpins = [0-9]*$' "$file" || { echo "snooze.sh: no snoozeSpins constant in $file" >&2; exit 1; }
copies=()
for n in $spins; do
  dir=$work/s$n
  mkdir -p "$dir"
  git ls-files -co --exclude-standard | tar -cf - -T - | tar -xf - -C "$dir"
  sed -i "s/^	snoozeSpins = [0-9]*$/	snoozeSpins = $n/" "$dir/$file"
  copies+=("$dir")
done
bash bench/channels/compare.sh "${flags[@]}" "${copies[@]}" "${dirs[@]}"
