#!/usr/bin/env bash
# Builds the fuzz targets of fuzz/ (clang's libFuzzer with ASan and UBSan, no CUDA) and runs each for
# SECONDS (default 60) on a working copy of its seed corpus (fuzz/corpus/<name>/ is only read). Prints
# each target's executions; a crash, a leak, undefined behaviour or a two-line message stops it, with
# the input under BUILD/crashes/. `make fuzz` runs it for longer (FUZZ_SECONDS), CI for a minute each.
set -euo pipefail
seconds=${1:-60}
cd "$(dirname "$0")/.."
build=${FUZZ_BUILD:-build-fuzz}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DC1D_WITH_CUDA=OFF -DC1D_FUZZ=ON \
  -DCMAKE_C_COMPILER=clang >/dev/null
# The names listed in fuzz/CMakeLists.txt's C1D_FUZZ_TARGETS, one a line.
targets=$(sed -n '/^set(C1D_FUZZ_TARGETS/,/^)/p' fuzz/CMakeLists.txt | grep -oE '^ +[a-z0-9_]+' | tr -d ' ')
for name in $targets; do cmake --build "$build" -j "$(nproc)" --target "fuzz_$name" >/dev/null; done
mkdir -p "$build/crashes"
status=0
for name in $targets; do
  work="$build/corpus/$name"
  mkdir -p "$work"
  log="$build/fuzz_$name.log"
  if "$build/fuzz/fuzz_$name" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
      -max_len=8192 -artifact_prefix="$build/crashes/$name-" "$work" $(ls -d "fuzz/corpus/$name" 2>/dev/null) \
      >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz_$name: $execs executions in ${seconds} s, no failure (corpus $(ls "$work" | wc -l) inputs)"
  else
    echo "fuzz_$name: FAILED; the log is $log, the input under $build/crashes/" >&2
    tail -40 "$log" >&2
    status=1
  fi
done
exit $status
