#!/usr/bin/env bash
# make run's job on a GPU host (issue 23): announced against taken, the estimate's parts and every
# stage's time in a log per run, so that a short or long announcement can be traced to its row and
# stage. Optionally a second convlab (BASELINE=path, e.g. the build before a change) in the same
# session, side by side. Prints one line per run: announced, taken, taken/announced; exit 1 when a
# ratio is outside 1/1.3 .. 1.3, 2 when a run failed.
# Usage: [OUT=dir] [RUNS=2] [BASELINE=path/to/convlab] scripts/estimate_gpu_check.sh [build-dir]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
out=${OUT:-$(mktemp -d)}
runs=${RUNS:-2}
mkdir -p "$out"
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
lscpu | grep -E 'Model name|^CPU\(s\)|L3' | sed 's/  */ /g'
# shellcheck source=announced_seconds.sh
. "$here/announced_seconds.sh"
now() { date +%s.%N; }
status=0
check() { # label binary i
  local label=$1 bin=$2 i=$3 log="$out/$1-$3.txt" t0 rc said took
  t0=$(now)
  C1D_ESTIMATE_TRACE=1 C1D_TRACE_TIMES=1 "$bin" run --out "$out/run-$label-$i" --html >"$log" 2>&1
  rc=$?
  took=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
  rm -rf "$out/run-$label-$i"
  said=$(grep -a '^convlab run: about ' "$log" | seconds_of 1)
  if [ "$rc" -ne 0 ] || [ -z "$said" ]; then
    echo "$label run $i: exit $rc, announced '${said:-nothing}', taken $took s"
    status=2
    return
  fi
  awk -v l="$label" -v i="$i" -v s="$said" -v t="$took" 'BEGIN {
    r = t / s; printf "%s run %d: announced %s s, taken %s s, ratio %.2f%s\n", l, i, s, t, r,
      (r > 1.3 || r < 1 / 1.3) ? "  <- off by more than 30 %" : "" }'
  awk -v s="$said" -v t="$took" 'BEGIN { exit !(t / s > 1.3 || t / s < 1 / 1.3) }' && [ "$status" -eq 0 ] && status=1
  grep '^estimate:' "$log" | sed 's/, [a-z_0-9]* 0.000 s//g'
}
for i in $(seq 1 "$runs"); do
  check new "$build/harness/convlab" "$i"
  [ -n "${BASELINE:-}" ] && check baseline "$BASELINE" "$i"
done
echo "logs: $out"
exit $status
