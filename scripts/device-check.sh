#!/usr/bin/env bash
# Every GPU claim of convlab, proven in one go on a machine with an NVIDIA GPU, most important first
# (run from the repository root, with a build made here or elsewhere and carried):
#   1. every GPU test suite (kernels and their CPU twins, libraries, bench, the bug zoo, fast kernels):
#      none may fail, none may skip except the "no device" tests;
#   2. `convlab bench` on the headline shape: every GPU implementation, ratios to both cuDNN modes,
#      each row's error, then the PyTorch cross-check of the cuDNN paths and the TF32 model;
#   3. `convlab run` on the headline shape: the verdicts, `--compare gpu_naive,cudnn_tf32` (the story's
#      check) and the HTML report;
#   4. compute-sanitizer memcheck, racecheck, initcheck, synccheck on every kernel at small shapes
#      (gpu_driver for the story's kernels and the oracle, fast_driver for the fast ones);
#   5. the headline table of gpu_driver (each kernel's CPU twin compared bit for bit at the headline
#      shape) and the float64 oracle against PyTorch's cuDNN float64.
# usage: scripts/device-check.sh BUILD_DIR     (OUT: the log folder, default ./device-check-out)
# environment: C1D_DEPS_PREFIX, a prefix holding Criterion's env.sh (see ../shared/device);
#              C1D_DEADLINE_S, seconds after which remaining steps are skipped (default 560).
# Exit status 0 only when every step ran and passed; the summary closes the output.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=${1:?usage: scripts/device-check.sh BUILD_DIR}
out=${OUT:-$PWD/device-check-out}
mkdir -p "$out"
deadline=${C1D_DEADLINE_S:-560}
convlab=$build/harness/convlab
if [ -n "${C1D_DEPS_PREFIX:-}" ]; then
  # shellcheck disable=SC1091
  source "$C1D_DEPS_PREFIX/env.sh"
fi
results=()
record() { results+=("$1: $2"); echo "--- $1: $2"; }
# run NAME LIMIT_S LOG CMD...: runs CMD under a time limit, unless the deadline has passed.
run() {
  local name=$1 limit=$2 log=$3
  shift 3
  if [ "$SECONDS" -ge "$deadline" ]; then
    record "$name" "SKIPPED (deadline)"
    return 1
  fi
  local left=$((deadline - SECONDS))
  [ "$limit" -gt "$left" ] && limit=$left
  echo "=== $name (limit ${limit}s, at ${SECONDS}s)"
  timeout "$limit" "$@" >"$log" 2>&1
  local rc=$?
  [ $rc -eq 0 ] && record "$name" "passed (${SECONDS}s)" || record "$name" "FAILED (exit $rc)"
  return $rc
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
echo "git: $(git rev-parse --short HEAD 2>/dev/null || echo '?')"

# 1. the GPU test suites
for t in "$build"/tests/test_gpu*; do
  name=$(basename "$t")
  run "$name" 240 "$out/$name.txt" "$t" --jobs 1 --verbose --ascii
  grep -E 'Synthesis' "$out/$name.txt" | tail -1
  grep -E '^\[(FAIL|CRASH|ERR)' "$out/$name.txt" | head -10
  bad=$(grep '^\[SKIP\]' "$out/$name.txt" | grep -v ': a CUDA device is present$' | head -3)
  [ -n "$bad" ] && record "$name" "SKIPPED TESTS: $bad"
done

# 2. the story: bench, PyTorch cross-check (conv_init inputs)
run "bench + PyTorch cross-check" 150 "$out/story.txt" \
  env CONVLAB="$convlab" bash scripts/crosscheck.sh "$out/story" --repeats 30 --quiet
cat "$out/story.txt"

# 3. verdicts, the story's comparison, the HTML report (GPU rows, the TF32 model; CPU rows on 16 cores
#    would add minutes of float32 loops at 137 GFLOP each)
run "convlab run --html" 150 "$out/run.txt" "$convlab" run --repeats 10 --html --out "$out/run" \
  --impl gpu_naive,gpu_tap_partial,gpu_kahan,gpu_tiled_smem,gpu_oracle_f64,gpu_tf32_inputs,cudnn_fp32,cudnn_tf32,cublas_im2col_fp32,cublas_im2col_tf32,gpu_fp32_fast,gpu_kahan_fast,gpu_tf32,gpu_3xtf32 \
  --compare gpu_naive,cudnn_tf32
cat "$out/run.txt"

# 4. sanitizers
for driver in fast_driver gpu_driver; do
  for tool in memcheck racecheck initcheck synccheck; do
    run "$tool $driver" 90 "$out/sanitize-$tool-$driver.txt" \
      compute-sanitizer --tool "$tool" --error-exitcode 9 "$build/gpu/$driver" sanitize
    grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize-$tool-$driver.txt" | tail -1
  done
done

# 5. twins at the headline shape, and the oracle against cuDNN float64
run "gpu_driver bench --twins" 150 "$out/twins.txt" "$build/gpu/gpu_driver" bench --repeats 10 --twins
grep -v '^RESULT' "$out/twins.txt"
grep -E '^RESULT twin' "$out/twins.txt"
run "PyTorch float64" 90 "$out/torch.txt" python3 scripts/bench_f64_torch.py \
  --shape 32,256,256,8192,4,1,0 --repeats 20
grep -v '^RESULT' "$out/torch.txt"
grep -E '^RESULT (oracle|torch)' "$out/twins.txt" "$out/torch.txt"

echo
echo "=== device-check summary (${SECONDS}s)"
status=0
for r in "${results[@]}"; do
  echo "  $r"
  case "$r" in *FAILED* | *SKIPPED*) status=1 ;; esac
done
exit $status
