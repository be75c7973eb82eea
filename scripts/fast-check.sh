#!/bin/bash
# The fast kernels' check (issue 8), in two halves.
#
#   scripts/fast-check.sh build [BUILD]   here: configure and build BUILD (default build-fast; BUILD/gpu/fast_driver too).
#   scripts/fast-check.sh run [BUILD]     on the GPU machine, from the repository root, with $OUT set:
#     1. SASS summary of the new kernels (registers come from the build log; HMMA, FFMA, LDGSTS, LDS
#        counts and local-memory traffic per kernel) -> $OUT/sass.txt
#     2. the tensor-core rounding probe, fast_driver bench on the headline shape (every variant, cuDNN
#        FP32/TF32, twins on batch row 0) and `convlab bench` on the headline shape for the four
#        registered kernels -> $OUT/bench.txt, $OUT/bench.json
#     3. the tests: test_gpu_fast (bit-exact twins, integers, model agreement, y past 2^31) and
#        test_cpu_fast_twins -> $OUT/tests.txt
#     4. compute-sanitizer memcheck, racecheck, synccheck and initcheck on `fast_driver sanitize` (every
#        fast kernel instance at small shapes) -> $OUT/sanitize.txt
#   A summary table closes the output. Build directories hold absolute paths of this checkout: the
#   binaries are run directly, not through ctest.
set -uo pipefail
mode=${1:-}
build=${2:-build-fast}
root=$(cd "$(dirname "$0")/.." && pwd)

case "$mode" in
build)
  set -e
  cmake -S "$root" -B "$root/$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$root/$build" -j "${JOBS:-2}"
  echo "built $root/$build (fast_driver: $root/$build/gpu/fast_driver)"
  ;;
run)
  : "${OUT:?OUT must name the folder for the logs}"
  B="$root/$build"
  summary=()
  note() { summary+=("$1"); }

  # 1. SASS
  {
    echo "== SASS of the fast kernels (cuobjdump --dump-sass $B/tests/test_gpu_fast)"
    cuobjdump --dump-sass "$B/tests/test_gpu_fast" >"$OUT/all.sass" 2>&1 || echo "cuobjdump failed"
    awk '/Function : /{name=$3} /^ +\/\*[0-9a-f]+\*\/ /{op=$2; sub(/\..*/,"",op); sub(/;$/,"",op); cnt[name" "op]++}
         END{for (k in cnt) print k, cnt[k]}' "$OUT/all.sass" |
      grep -E "simt_conv|mma_conv" | grep -E " (FFMA|HMMA|LDGSTS|LDS|LDL|STL|BAR|F2FP|FADD) " | sort
    rm -f "$OUT/all.sass"
  } >"$OUT/sass.txt" 2>&1
  grep -q "HMMA" "$OUT/sass.txt" && note "sass: HMMA present" || note "sass: no HMMA found"
  grep -q "LDGSTS" "$OUT/sass.txt" && note "sass: LDGSTS (cp.async) present" || note "sass: no LDGSTS found"
  grep -qE " (LDL|STL) " "$OUT/sass.txt" && note "sass: LOCAL MEMORY traffic" || note "sass: no local memory"

  # 2. probe and benches first: the numbers matter most if the call runs short
  {
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
    "$B/gpu/fast_driver" probe
    "$B/gpu/fast_driver" bench --repeats 20 --rounds 2
    echo "== convlab bench"
    timeout 120 "$B/harness/convlab" bench \
      --impl gpu_fp32_fast,gpu_kahan_fast,gpu_tf32,gpu_3xtf32,cudnn_fp32,cudnn_tf32 --repeats 20 \
      --out "$OUT/bench.json" 2>&1
    echo "rc=$?"
    echo "== convlab run (the explainer's verdicts)"
    timeout 120 "$B/harness/convlab" run --impl gpu_fp32_fast,gpu_kahan_fast,gpu_tf32,gpu_3xtf32 \
      --batch 2 --cin 256 --cout 256 --length 2048 --taps 4 --dist normal --repeats 3 2>&1
    echo "rc=$?"
  } >"$OUT/bench.txt" 2>&1
  note "$(grep 'RESULT probe' "$OUT/bench.txt")"

  # 3. tests
  {
    echo "== test_gpu_fast"
    timeout 200 "$B/tests/test_gpu_fast" --jobs 1 --verbose 2>&1
    echo "rc=$?"
    echo "== test_cpu_fast_twins"
    timeout 60 "$B/tests/test_cpu_fast_twins" --jobs 8 2>&1
    echo "rc=$?"
  } >"$OUT/tests.txt" 2>&1
  note "tests: $(grep -E 'Synthesis|^rc=' "$OUT/tests.txt" | tr '\n' ' ')"

  # 4. sanitizers on every fast kernel instance at small shapes
  {
    for tool in memcheck racecheck synccheck initcheck; do
      echo "== compute-sanitizer --tool $tool"
      timeout "${SANITIZER_TIMEOUT:-60}" compute-sanitizer --tool "$tool" --error-exitcode 9 \
        "$B/gpu/fast_driver" sanitize 2>&1 | tail -40
      echo "rc=${PIPESTATUS[0]}"
    done
  } >"$OUT/sanitize.txt" 2>&1
  note "sanitizers: $(grep -E '^== compute|^rc=|ERROR SUMMARY' "$OUT/sanitize.txt" | tr '\n' ' ')"

  echo "== failing or informative test lines"
  grep -E "\[FAIL\]|info\]|\[----\]" "$OUT/tests.txt" | head -30
  echo "== summary"
  for line in "${summary[@]}"; do echo "$line"; done
  grep -E "^RESULT|ms " "$OUT/bench.txt" | head -40
  sed -n '/== convlab bench/,$p' "$OUT/bench.txt" | head -60
  ;;
*)
  echo "usage: scripts/fast-check.sh build|run [BUILD]" >&2
  exit 2
  ;;
esac
