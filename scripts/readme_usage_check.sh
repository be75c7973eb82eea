#!/usr/bin/env bash
# The README's "Using convlab" block, run as written, each line through a pipe (as in CI or `| tee`):
# per line its exit status, the time it took, the time it announced ("about ... here") and their ratio.
# A line fails when it exits non-zero without saying so in its comment ("exit 1 without one"), or when
# an announced time is off by more than 30 % (TOLERANCE; a --estimate line only announces). Run from the repository root after
# `make build`; writes under out/ as the block does. A few minutes on two cores.
# usage: scripts/readme_usage_check.sh [README]     exit status 0 when every line holds, else 1
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
readme=${1:-README.md}
tolerance=${TOLERANCE:-1.3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The block: from "## Using convlab" to its first closing fence; continuation lines joined.
awk '/^## Using convlab/ { s = 1 } s && /^```sh/ { b = 1; next } b && /^```/ { exit } b' "$readme" |
  sed -e ':a' -e '/\\$/N; s/\\\n//; ta' > "$work/block.sh"
[ -s "$work/block.sh" ] || { echo "readme_usage_check: no sh block under '## Using convlab' in $readme" >&2; exit 1; }

# shellcheck source=announced_seconds.sh
. scripts/announced_seconds.sh # (the repository root is the working directory)

failed=0
printf '%-6s %5s %9s %9s %6s  %s\n' result exit announced taken ratio line
while IFS= read -r line; do
  case "$line" in '' | '#'*) continue ;; esac
  case "$line" in [A-Z]=*) eval "$line"; continue ;; esac # B=..., T=...
  t0=$(date +%s.%N)
  eval "$line" 2>&1 | cat > "$work/out.txt"
  rc=${PIPESTATUS[0]}
  taken=$(echo "$(date +%s.%N) - $t0" | bc)
  announced=$(seconds_of 1 < "$work/out.txt")
  ratio=""
  result=ok
  # --estimate announces and stops: its time is the announcement's own, not the run's.
  [ -n "$announced" ] && [[ "$line" != *--estimate* ]] && ratio=$(echo "scale=2; $taken / $announced" | bc)
  if [ "$rc" -ne 0 ] && ! [[ "$line" == *"exit $rc without"* ]]; then result=FAILED; fi
  if [ -n "$ratio" ] && { [ "$(echo "$ratio > $tolerance" | bc)" = 1 ] ||
                          [ "$(echo "$ratio * $tolerance < 1" | bc)" = 1 ]; }; then result=OFF; fi
  [ "$result" = ok ] || failed=1
  printf '%-6s %5s %9s %9.1f %6s  %s\n' "$result" "$rc" "${announced:--}" "$taken" "${ratio:--}" "${line%%#*}"
  [ "$result" = FAILED ] && tail -n 2 "$work/out.txt" | sed 's/^/         /'
done < "$work/block.sh"
exit "$failed"
