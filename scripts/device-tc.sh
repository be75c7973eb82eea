#!/usr/bin/env bash
# Issue 25's claims on an H200, in one call (run from the repository root with a build made here or
# elsewhere and carried):
#   1. `convlab bench` on the headline shape (N=32, C=O=256, L=8192, K=4) for the tensor-core rows and
#      gpu_fp32_fast, once per setting of the wgmma engine: x windows by cp.async or by the bulk tensor
#      copy (C1D_WGC_XCOPY), 3 to 6 stages (C1D_WGC_STAGES); each run with cuDNN's fastest FP32 and TF32
#      and PyTorch's F.conv1d (benchmark mode, TF32 off and on) beside it; and the FP32 FMA ceiling
#      (gpu_driver fma-ceiling);
#   2. Nsight Compute on the wgmma kernels: duration, tensor pipe, L2 and DRAM throughput, warp stalls
#      (the sections as text, the raw metrics as CSV, gpu_tf32's stall samples per SASS instruction);
#   3. test_gpu_fast (every setting gives the same bits; models; integers), test_gpu_bench, compute-sanitizer
#      memcheck, racecheck and synccheck on gpu_tf32 and gpu_3xtf32 at every setting;
#   4. the SASS of the tensor-core kernels (HGMMA, UTMALDG with and without multicast).
# usage: scripts/device-tc.sh BUILD_DIR   (OUT: the log folder, default ./device-tc-out;
#        C1D_DEPS_PREFIX: a prefix holding Criterion's env.sh, see ../shared/device;
#        TC_STEPS: the steps to run, default "bench ceiling ncu tests sanitize sass"; TC_SETTINGS: the engine's
#        settings as XCOPY:STAGES, default "cp:5 tma:4 tma:5 tma:6"; TC_NCU: those ncu profiles, as
#        IMPL:XCOPY:STAGES, default "gpu_tf32:tma:5 gpu_3xtf32:tma:5")
# Exit status 0 only when every step ran and passed; one line per step and the bench rows close the output.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=${1:?usage: scripts/device-tc.sh BUILD_DIR}
out=${OUT:-$PWD/device-tc-out}
steps=${TC_STEPS:-bench ceiling ncu tests sanitize sass}
log=$out/logs # every log; tarred into OUT/logs.tgz at the end (a device call returns at most 8 files)
mkdir -p "$log"
convlab=$build/harness/convlab
driver=$build/gpu/gpu_driver
if [ -n "${C1D_DEPS_PREFIX:-}" ]; then
  # shellcheck disable=SC1091
  source "$C1D_DEPS_PREFIX/env.sh"
fi
results=()
failed=0
step() { # step NAME LIMIT_S LOG CMD...
  local name=$1 limit=$2 log=$3 t0=$SECONDS rc
  shift 3
  timeout "$limit" "$@" >"$log" 2>&1
  rc=$?
  if [ "$rc" -eq 0 ]; then results+=("$name: passed ($((SECONDS - t0)) s)")
  else results+=("$name: FAILED (exit $rc, $((SECONDS - t0)) s)"); failed=1; fi
  return $rc
}
has() { [[ " $steps " == *" $1 "* ]]; }
rows='^ *(gpu_tf32|gpu_3xtf32|gpu_fp32_fast|cudnn_tf32_fastest|cudnn_fp32_fastest|torch_conv1d_fp32|torch_conv1d_tf32) '

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "git: $(git rev-parse --short HEAD 2>/dev/null || echo '?')"

# 1. the bench, once per setting; the FMA ceiling
settings=${TC_SETTINGS:-cp:5 tma:4 tma:5 tma:6}
if has bench; then
  for set in $settings; do
    step "bench, x by ${set%%:*}, ${set##*:} stages" 150 "$log/bench-$set.txt" \
      env C1D_WGC_XCOPY="${set%%:*}" C1D_WGC_STAGES="${set##*:}" "$convlab" bench \
      --impl gpu_tf32,gpu_3xtf32,gpu_fp32_fast --repeats 30 --out "$log/bench-$set.json"
  done
fi
if has ceiling; then
  step "FP32 FMA ceiling" 60 "$log/fma-ceiling.txt" "$driver" fma-ceiling
  cat "$log/fma-ceiling.txt"
fi

# 2. Nsight Compute: the sections as text, the raw metrics as CSV, the stall samples per SASS instruction
if has ncu; then
  for prof in ${TC_NCU:-gpu_tf32:tma:5 gpu_3xtf32:tma:5}; do
    IFS=: read -r impl xcopy stages <<<"$prof"
    rep="$log/ncu-$impl-$xcopy-$stages"
    step "ncu $impl, x by $xcopy, $stages stages" 180 "$rep.log" env C1D_WGC_XCOPY="$xcopy" C1D_WGC_STAGES="$stages" \
      ncu --clock-control none -k regex:wgc_conv_kernel -c 1 --set full --import-source yes \
      -f -o "$rep" "$convlab" bench --impl "$impl" --repeats 1 --no-torch --out "$log/ncu-bench.json"
    if [ -f "$rep.ncu-rep" ]; then
      ncu --import "$rep.ncu-rep" --page details >"$rep.txt" 2>&1
      ncu --import "$rep.ncu-rep" --page raw --csv >"$rep.csv" 2>&1
      ncu --import "$rep.ncu-rep" --page source --csv --print-source sass >"$rep-sass.csv" 2>&1
      rm -f "$rep.ncu-rep"
      grep -E 'Duration|Compute \(SM\) Throughput|L2 Cache Throughput|DRAM Throughput' "$rep.txt" | head -8
    fi
  done
fi

# 3. the suites, and the sanitizers at the shallowest and deepest pipelines on both x paths
if has tests; then
  for t in test_gpu_fast test_gpu_bench; do
    step "$t" 300 "$log/$t.txt" "$build/tests/$t" --jobs 1 --verbose --ascii
    grep -E 'Synthesis|^\[(FAIL|CRASH|ERR)' "$log/$t.txt" | head -12
  done
fi
if has sanitize; then
  for set in cp:3 cp:6 tma:3 tma:6; do
    for tool in memcheck racecheck synccheck; do
      step "$tool, x by ${set%%:*}, ${set##*:} stages" 150 "$log/sanitize-$tool-$set.txt" \
        env C1D_WGC_XCOPY="${set%%:*}" C1D_WGC_STAGES="${set##*:}" \
        compute-sanitizer --tool "$tool" --error-exitcode 9 "$driver" sanitize --only gpu_tf32,gpu_3xtf32
      grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log/sanitize-$tool-$set.txt" | tail -1
    done
  done
fi

# 4. the SASS
if has sass; then
  step "SASS of the tensor-core kernels" 90 "$log/sass.txt" bash -c \
    "cuobjdump --dump-sass '$convlab' | grep -oE 'HGMMA[.A-Z0-9x]*|UTMALDG[.A-Z0-9]*' | sort | uniq -c | tee /dev/stderr | grep -q HGMMA"
  cat "$log/sass.txt"
fi

echo "=== summary"
printf '%s\n' "${results[@]}"
for set in $settings; do
  [ -f "$log/bench-$set.txt" ] || continue
  echo "--- bench, x by ${set%%:*}, ${set##*:} stages"
  grep -E "$rows" "$log/bench-$set.txt" | cut -c1-130
done
tar czf "$out/logs.tgz" -C "$out" logs && rm -rf "$log"
exit $failed
