#!/usr/bin/env bash
# Every GPU claim of convlab, proven in one go on a machine with an NVIDIA GPU (run from the repository
# root, with a build made here or on another machine and carried):
#   1. scripts/gpu-check.sh: every GPU test suite (kernels, libraries, bench, bug zoo, fast kernels;
#      none may skip), compute-sanitizer on the story's kernels, the headline table with each kernel's
#      CPU twin compared bit for bit, the float64 oracle against PyTorch's cuDNN float64;
#   2. compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on every fast kernel (fast_driver);
#   3. the story on the headline shape: `convlab bench` (every GPU implementation, ratios to both cuDNN
#      modes, each row's error) and the PyTorch cross-check of the cuDNN paths and the TF32 model;
#   4. `convlab run` on the headline shape with the verdicts, `--compare gpu_naive,cudnn_tf32` (the
#      story's check) and the HTML report.
# usage: scripts/device-check.sh BUILD_DIR     (OUT: the log folder, default ./device-check-out)
# environment: C1D_DEPS_SETUP, a setup-deps.sh that unpacks Criterion (see gpu-check.sh)
# Exit status 0 only when every step passed; the summary lines close the output.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=${1:?usage: scripts/device-check.sh BUILD_DIR}
out=${OUT:-$PWD/device-check-out}
mkdir -p "$out"
convlab=$build/harness/convlab
results=()
record() { results+=("$1: $2"); }

# 1. the GPU check (its own summary ends its log)
OUT="$out/gpu-check" C1D_BENCH_REPEATS=${C1D_BENCH_REPEATS:-10} bash scripts/gpu-check.sh "$build" \
  >"$out/gpu-check.txt" 2>&1
rc=$?
grep -E '^(PASS|FAIL)|: Tested|gpu-check:' "$out/gpu-check.txt"
[ $rc -eq 0 ] && record "gpu-check" "passed" || record "gpu-check" "FAILED (exit $rc)"
# gpu-check.sh sourced Criterion's env.sh in its own shell; the later steps need no Criterion.

# 2. sanitizers on the fast kernels
: >"$out/sanitize-fast.txt"
for tool in memcheck racecheck synccheck initcheck; do
  timeout 120 compute-sanitizer --tool "$tool" --error-exitcode 9 "$build/gpu/fast_driver" sanitize \
    >>"$out/sanitize-fast.txt" 2>&1
  rc=$?
  line=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize-fast.txt" | tail -1)
  [ $rc -eq 0 ] && record "fast kernels $tool" "clean (${line:-no summary})" ||
    record "fast kernels $tool" "FAILED (exit $rc; ${line:-no summary})"
done

# 3. the story: bench and the PyTorch cross-check (conv_init inputs)
CONVLAB=$convlab bash scripts/crosscheck.sh "$out/story" --repeats 30 >"$out/story.txt" 2>&1
rc=$?
cat "$out/story.txt"
[ $rc -eq 0 ] && record "bench + PyTorch cross-check" "passed" ||
  record "bench + PyTorch cross-check" "FAILED (exit $rc)"

# 4. the verdicts on the headline shape, the story's comparison, the HTML report
timeout 400 "$convlab" run --impl all --compare gpu_naive,cudnn_tf32 --repeats 10 --html \
  --out "$out/run" >"$out/run.txt" 2>&1
rc=$?
cat "$out/run.txt"
[ $rc -eq 0 ] && record "convlab run (headline, all)" "passed" ||
  record "convlab run (headline, all)" "FAILED (exit $rc)"

echo
echo "=== device-check summary"
status=0
for r in "${results[@]}"; do
  echo "  $r"
  case "$r" in *FAILED*) status=1 ;; esac
done
exit $status
