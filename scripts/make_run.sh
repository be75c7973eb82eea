#!/usr/bin/env bash
# `make run`: builds convlab if needed (its output into a log, a line every 15 s meanwhile), runs
# `convlab run --out OUT --html`, then says where the reports are and how to open them.
# Usage: scripts/make_run.sh BUILD OUT JOBS [more arguments of convlab run]
set -uo pipefail
build=$1 out=$2 jobs=$3
shift 3
log="$build/make-run-build.log"
mkdir -p "$build"

if [ ! -x "$build/harness/convlab" ]; then
  if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
    echo "make run: building convlab first, its CUDA code included: about 70 s on an idle 2-core machine" \
         "(later builds take seconds); the build's output goes to $log"
  else
    echo "make run: building convlab first (no nvcc: CPU implementations only, quicker than with CUDA);" \
         "the build's output goes to $log"
  fi
fi

# The build's own lines go to the log; a line every 15 s says it is still going and how far.
started=$SECONDS
{ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} && \
  cmake --build "$build" -j "$jobs" --target convlab; } >"$log" 2>&1 &
pid=$!
next=15
while kill -0 "$pid" 2>/dev/null; do
  sleep 1
  if [ $((SECONDS - started)) -ge "$next" ]; then
    done_pct=$(grep -oE '^\[ *[0-9]+%\]' "$log" | tail -1 | tr -d '[] ')
    echo "make run: still building (${done_pct:-0%} of the build's steps after $((SECONDS - started)) s)"
    next=$((next + 15))
  fi
done
if ! wait "$pid"; then
  echo "make run: the build of convlab failed; its last lines (all of them in $log):" >&2
  tail -n 20 "$log" >&2
  exit 1
fi
if [ $((SECONDS - started)) -ge 5 ]; then echo "make run: convlab built in $((SECONDS - started)) s"; fi

echo "make run: ./$build/harness/convlab run --out $out --html${*:+ $*}"
"./$build/harness/convlab" run --out "$out" --html "$@"
code=$?
if [ -e "$out/report.json" ]; then
  echo "make run: the reports are in $out/: report.html (open it in a browser, e.g. xdg-open $out/report.html;" \
       "it works offline), report.txt (the table above), report.json and report.csv (docs/report-format.md)"
fi
exit $code
