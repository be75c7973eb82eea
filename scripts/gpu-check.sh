#!/usr/bin/env bash
# The GPU check, in one go on a machine with an NVIDIA GPU, from the repository root:
#   1. build (unless a build directory is given), 2. the GPU test suites (tests/test_gpu*: none may
#   fail, none may skip except the "no device" tests), 3. compute-sanitizer memcheck, racecheck,
#   initcheck and synccheck on every kernel at small shapes (gpu_driver sanitize), 4. the headline
#   table (gpu_driver bench: median time and error against the float64 GPU oracle of each kernel, with
#   each bit-exact twin compared to its CPU implementation), 5. PyTorch's float64 conv1d on the same
#   GPU (scripts/bench_f64_torch.py), then `convlab run` on the same shape (when the CLI is built),
#   6. the verdicts: twins bit-exact, gpu_tiled_smem faster than
#   gpu_naive, gpu_oracle_f64 (y and m) no slower than cuDNN float64.
#
# usage: scripts/gpu-check.sh [BUILD_DIR]
#   BUILD_DIR              an existing build to use as it is (e.g. one built elsewhere and carried here);
#                          without it, the script configures and builds ./build-gpu (or ./build-gpu-check
#                          when ./build-gpu belongs to another source tree)
# environment:
#   OUT                    where logs go (default ./gpu-check-out): gpu-check.log, tests.log,
#                          sanitize.log, bench.log, torch.log, convlab.log, sass.txt
#   C1D_DEPS_PREFIX        a prefix already holding Criterion, with env.sh (see ../shared/device)
#   C1D_DEPS_SETUP         a setup-deps.sh to run first; it unpacks into C1D_DEPS_PREFIX (default /opt/deps)
#   C1D_GPU_TESTS          test binaries to run (names, space separated; default every tests/test_gpu*)
#   C1D_BENCH_REPEATS      timed runs per implementation (default 10)
#   C1D_BENCH_SHAPE        N,C,O,L,K,D,bias (default the headline shape 32,256,256,8192,4,1,0)
#   C1D_CHECK_NO_TWINS=1   skip the CPU twins at the bench shape (they take seconds on many cores)
# Exit status 0 only when every step passed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD
out=${OUT:-$root/gpu-check-out}
mkdir -p "$out"
exec > >(tee "$out/gpu-check.log") 2>&1

failures=()
step() { printf '\n=== %s ===\n' "$*"; }
fail() { failures+=("$1"); echo "FAIL: $1"; }
pass() { echo "PASS: $1"; }
# shellcheck disable=SC2317  # called by the EXIT trap
summary() {
  step "summary"
  if [ ${#failures[@]} -eq 0 ]; then
    echo "gpu-check: ALL PASSED"
  else
    echo "gpu-check: ${#failures[@]} FAILED:"
    printf '  - %s\n' "${failures[@]}"
  fi
}
trap summary EXIT
finish() { [ ${#failures[@]} -eq 0 ]; exit $?; }

# --- dependencies ---------------------------------------------------------------------------------
if [ -n "${C1D_DEPS_SETUP:-}" ]; then
  prefix=${C1D_DEPS_PREFIX:-/opt/deps}
  bash "$C1D_DEPS_SETUP" "$prefix" >/dev/null || fail "deps: $C1D_DEPS_SETUP $prefix"
  C1D_DEPS_PREFIX=$prefix
fi
if [ -n "${C1D_DEPS_PREFIX:-}" ]; then
  if [ -f "$C1D_DEPS_PREFIX/env.sh" ]; then
    # shellcheck disable=SC1091
    source "$C1D_DEPS_PREFIX/env.sh"
  else
    fail "deps: no env.sh in $C1D_DEPS_PREFIX"
  fi
fi

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1 || true
command -v nvcc >/dev/null && nvcc --version | tail -2
echo "git: $(git rev-parse --short HEAD 2>/dev/null || echo '?') $(git status --porcelain 2>/dev/null | wc -l) files changed"

# --- build ----------------------------------------------------------------------------------------
build=${1:-}
if [ -z "$build" ]; then
  build="build-gpu"
  if [ -f "$build/CMakeCache.txt" ] && ! grep -q "^CMAKE_HOME_DIRECTORY:INTERNAL=$root\$" "$build/CMakeCache.txt"; then
    build="build-gpu-check"
  fi
  step "build ($build)"
  if ! { cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release && cmake --build "$build" -j"$(nproc)"; }; then
    fail "build"
    finish
  fi
else
  step "build: using $build as it is"
fi
driver=$build/gpu/gpu_driver
[ -x "$driver" ] || { fail "no $driver"; finish; }

# --- GPU test suites --------------------------------------------------------------------------------
step "GPU test suites"
: >"$out/tests.log"
if [ -n "${C1D_GPU_TESTS:-}" ]; then
  tests=()
  for name in $C1D_GPU_TESTS; do tests+=("$build/tests/$name"); done
else
  tests=("$build"/tests/test_gpu*)
fi
for t in "${tests[@]}"; do
  name=$(basename "$t")
  [ -x "$t" ] || { fail "$name: not built"; continue; }
  echo "--- $name" >>"$out/tests.log"
  timeout 240 "$t" --jobs 1 --verbose --ascii >>"$out/tests.log.part" 2>&1
  rc=$?
  cat "$out/tests.log.part" >>"$out/tests.log"
  synthesis=$(grep 'Synthesis' "$out/tests.log.part" | tail -1 | sed 's/.*Synthesis: //')
  skips=$(grep -c '^\[SKIP\]' "$out/tests.log.part")
  bad_skips=$(grep '^\[SKIP\]' "$out/tests.log.part" | grep -v ': a CUDA device is present$')
  echo "$name: ${synthesis:-no summary} | skipped: $skips (expected only 'a CUDA device is present')"
  grep -E '^\[(FAIL|CRASH|ERR)' "$out/tests.log.part" | head -20
  if [ $rc -ne 0 ]; then fail "$name: exit status $rc"; fi
  if [ -n "$bad_skips" ]; then
    echo "$bad_skips" | head -5
    fail "$name: GPU tests skipped"
  fi
  [ $rc -eq 0 ] && [ -z "$bad_skips" ] && pass "$name"
  rm -f "$out/tests.log.part"
done

# --- compute-sanitizer --------------------------------------------------------------------------------
step "compute-sanitizer on every kernel at small shapes"
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
: >"$out/sanitize.log"
if [ ! -x "$cs" ]; then
  fail "compute-sanitizer not found"
else
  for tool in memcheck racecheck initcheck synccheck; do
    echo "--- $tool" >>"$out/sanitize.log"
    timeout 300 "$cs" --tool "$tool" --error-exitcode 99 "$driver" sanitize >>"$out/sanitize.log" 2>&1
    rc=$?
    verdict=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize.log" | tail -1)
    echo "$tool: exit $rc; ${verdict:-no summary line}"
    if [ $rc -eq 0 ]; then pass "sanitizer $tool"; else fail "sanitizer $tool (exit $rc)"; fi
  done
fi

# --- the headline table ------------------------------------------------------------------------------
step "headline table (gpu_driver bench)"
bench_args=(--repeats "${C1D_BENCH_REPEATS:-10}")
[ -n "${C1D_BENCH_SHAPE:-}" ] && bench_args+=(--shape "$C1D_BENCH_SHAPE")
[ "${C1D_CHECK_NO_TWINS:-0}" = 1 ] || bench_args+=(--twins)
timeout 400 "$driver" bench "${bench_args[@]}" >"$out/bench.log" 2>&1 || fail "bench: exit status $?"
grep -v '^RESULT' "$out/bench.log"

step "PyTorch conv1d on the same GPU (cuDNN)"
torch_shape=${C1D_BENCH_SHAPE:-32,256,256,8192,4,1,0}
timeout 300 python3 scripts/bench_f64_torch.py --shape "$torch_shape" --repeats 20 >"$out/torch.log" 2>&1 \
  || fail "bench_f64_torch.py: exit status $?"
grep -v '^RESULT' "$out/torch.log"

convlab=$build/harness/convlab
if [ -x "$convlab" ]; then
  step "convlab run on the headline shape"
  shape_flags=()
  if [ -n "${C1D_BENCH_SHAPE:-}" ]; then
    IFS=, read -r n c o l k d bias <<<"$C1D_BENCH_SHAPE"
    shape_flags=(--batch "$n" --cin "$c" --cout "$o" --length "$l" --taps "$k" --dilation "$d")
    [ "$bias" = 1 ] && shape_flags+=(--bias)
  fi
  timeout 300 "$convlab" run "${shape_flags[@]}" --oracle gpu --dist conv_init --seed 1 \
    --repeats "${C1D_BENCH_REPEATS:-10}" \
    --impl gpu_naive,gpu_tap_partial,gpu_kahan,gpu_tiled_smem,gpu_oracle_f64,cudnn_fp32,cudnn_tf32,cublas_im2col_fp32,cublas_im2col_tf32,gpu_tf32_inputs \
    >"$out/convlab.log" 2>&1
  rc=$?
  cat "$out/convlab.log"
  if [ $rc -eq 0 ]; then pass "convlab run"; else fail "convlab run: exit status $rc"; fi
fi

if command -v cuobjdump >/dev/null; then
  # The SASS of the oracle's and the tiled kernel's instances: DMMA is the FP64 tensor-core instruction.
  cuobjdump --dump-sass "$driver" 2>&1 | awk '/Function :/ {keep = /oracle_mma|tiled_smem/} keep' \
    | head -c 15000000 >"$out/sass.txt"
  echo "SASS: $(grep -c 'DMMA' "$out/sass.txt") DMMA instructions in the oracle's MMA kernels"
fi

# --- verdicts ---------------------------------------------------------------------------------------
step "verdicts"
result() { awk -v k="$1" -v n="$2" '$1 == "RESULT" && $2 == k && (n == "" || $3 == n) {print}' "$out/bench.log" "$out/torch.log"; }
while read -r _ _ name twin differ; do
  if [ "$differ" = 0 ]; then pass "$name bit-exact with its CPU twin $twin at the bench shape"
  else fail "$name differs from its CPU twin $twin in $differ elements at the bench shape"; fi
done < <(result twin "")
while read -r _ _ name _ _ nonfinite; do
  if [ "$nonfinite" != 0 ]; then fail "$name: $nonfinite non-finite outputs"; fi
done < <(result time "")
naive=$(result time gpu_naive | awk '{print $4}')
tiled=$(result time gpu_tiled_smem | awk '{print $4}')
if [ -n "$naive" ] && [ -n "$tiled" ]; then
  if awk -v a="$tiled" -v b="$naive" 'BEGIN {exit !(a < b)}'; then
    pass "gpu_tiled_smem ($tiled ms) is faster than gpu_naive ($naive ms)"
  else
    fail "gpu_tiled_smem ($tiled ms) is not faster than gpu_naive ($naive ms)"
  fi
else
  fail "no time for gpu_naive or gpu_tiled_smem"
fi
oracle=$(result oracle_ym_ms "" | awk '{print $3}')
oracle_y=$(result oracle_y_ms "" | awk '{print $3}')
torch64=$(result torch_fp64_best_ms "" | awk '{print $3}')
if [ -n "$oracle" ] && [ -n "$torch64" ]; then
  if awk -v a="$oracle" -v b="$torch64" 'BEGIN {exit !(a <= b)}'; then
    pass "gpu_oracle_f64, y and m: $oracle ms (y alone $oracle_y ms) <= cuDNN float64 via PyTorch: $torch64 ms"
  else
    fail "gpu_oracle_f64, y and m: $oracle ms (y alone $oracle_y ms) > cuDNN float64 via PyTorch: $torch64 ms"
  fi
else
  fail "no oracle or PyTorch float64 time"
fi
finish
