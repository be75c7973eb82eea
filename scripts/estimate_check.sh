#!/usr/bin/env bash
# How well convlab's announced times foresee the runs (issue 23): runs a handful of commands, each once
# with --estimate (how long the estimate itself takes) and once for real, and prints per command the
# time announced, the time taken and their ratio (taken / announced), side by side. Exit status 1 when
# a ratio is outside 1/1.3 .. 1.3 (the goal: within 30 %) or an estimate took more than 1 s (the goal:
# announced within 1 s of the start), 2 when a command failed. The timings are
# this machine's, now: other work on a 2-core machine upsets both the short calibration and the run,
# so each line also says how many cores other processes kept busy meanwhile ("others": from
# /proc/stat, less the command's own CPU time); a ratio beside others > 0.2 says little. Takes a few
# minutes (CPU build: about 2 min in all on an idle 2-core machine).
# Usage: scripts/estimate_check.sh [quick | 'COMMAND' ...]    (CONVLAB=path/to/convlab; quick: the
# shorter half only; or the convlab commands to check, each one argument: 'run --impl naive --trials 2')
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
convlab=${CONVLAB:-$here/../build/harness/convlab}
tolerance=${TOLERANCE:-1.3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# shellcheck source=announced_seconds.sh
. "$here/announced_seconds.sh"

now() { date +%s.%N; }
hz=$(getconf CLK_TCK)
# CPU seconds every process has used so far (user, nice, system, irq, softirq, steal).
busy() { awk -v hz="$hz" '/^cpu /{ printf "%.2f\n", ($2 + $3 + $4 + $7 + $8 + $9) / hz }' /proc/stat; }

commands=(
  "run --impl naive --batch 4 --length 8192"
  "run --impl naive,kahan --trials 3"
  "run --impl grouped_naive,naive --dtype x=bf16,w=bf16,y=bf16 --cin 512"
  "sweep"
)
if [ "${1:-}" != quick ]; then
  commands+=(
    "run"
    "run --impl naive,kahan,tf32_inputs --cin 512 --taps 8 --dilation 2 --bias --trials 3"
  )
  [ $# -gt 0 ] && commands=("$@")
fi

echo "load before: $(uptime | sed 's/.*load average: //') on $(nproc) cores"
printf '%-88s %9s %9s %9s %7s %7s\n' "command" "estimate" "announced" "taken" "ratio" "others"
status=0
for c in "${commands[@]}"; do
  read -ra args <<<"$c"
  t0=$(now)
  est_line=$("$convlab" "${args[@]}" --estimate 2>/dev/null)
  t1=$(now)
  est_took=$(echo "$t1 - $t0" | bc)
  b0=$(busy)
  /usr/bin/time -f "%e %U %S" -o "$work/time" "$convlab" "${args[@]}" >"$work/out" 2>"$work/err"
  rc=$?
  b1=$(busy)
  read -r took user sys <"$work/time"
  others=$(echo "scale=2; ($b1 - $b0 - $user - $sys) / $took" | bc)
  # The run's own announcement; a run too short to be announced is compared with --estimate's line.
  said=$(grep -a "^convlab [a-z]*: about " "$work/err" | seconds_of)
  [ -n "$said" ] || said=$(echo "$est_line" | seconds_of)
  if [ "$rc" -gt 1 ] || [ -z "$said" ]; then
    printf '%-88s %9s %9s %8.1fs %7s %7s  (exit %d, no estimate?)\n' "convlab $c" "-" "-" "$took" "-" "$others" "$rc"
    status=2
    continue
  fi
  ratio=$(echo "scale=3; $took / $said" | bc)
  flag=""
  if [ "$(echo "$ratio > $tolerance || $ratio * $tolerance < 1" | bc)" = 1 ]; then
    flag="  <- off by more than $(echo "($tolerance - 1) * 100" | bc | sed 's/\..*//') %"
    [ "$status" -eq 0 ] && status=1
  fi
  if [ "$(echo "$est_took > 1.0" | bc)" = 1 ]; then # the estimate itself: announced within 1 s of the start
    flag="$flag  <- the estimate took more than 1 s"
    [ "$status" -eq 0 ] && status=1
  fi
  printf '%-88s %8.2fs %8.1fs %8.1fs %7.2f %7.2f%s\n' "convlab $c" "$est_took" "$said" "$took" "$ratio" "$others" "$flag"
done
echo "load after: $(uptime | sed 's/.*load average: //')"
exit "$status"
