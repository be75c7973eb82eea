#!/usr/bin/env bash
# Every GPU claim of convlab, proven in one go on a machine with an NVIDIA GPU, most important first
# (run from the repository root, with a build made here or elsewhere and carried):
#   1. `convlab bench` on the headline shape: every GPU implementation of tier main and variant (the
#      cuDNN and cuBLAS rows name their algorithms: the heuristic's first, the fastest of the library's
#      own search, the first deterministic), ratios to cuDNN's fastest per math mode and to PyTorch's
#      F.conv1d in benchmark mode (its rows in the table), each row's error, then the PyTorch cross-check
#      of the cuDNN paths and the TF32 model; power and clocks beside it;
#   2. make run's command (`convlab run --out DIR --html`, every main implementation on the headline
#      shape, the CPU rows on its first two batch rows), timed: the goal is under 30 s;
#   3. compute-sanitizer memcheck, racecheck, initcheck, synccheck on `gpu_driver sanitize` (every own
#      GPU kernel of the registry at small shapes, the bit-exact ones against their CPU twins), and
#      memcheck and racecheck again with the channel-last ring kernels' strips forced to 37 positions;
#   4. every GPU test suite (kernels and their CPU twins, libraries, bench, the bug zoo, fast kernels):
#      none may fail, none may skip except the "no device" tests;
#   5. the twins at the headline shape (gpu_driver twins), the tensor-core rounding probe, the FP32 FMA
#      ceiling (gpu_driver fma-ceiling: the bound on a kernel of one fma per product), the SASS of
#      the tensor-core kernels (HGMMA, bulk tensor copies), the float64 oracle against PyTorch's;
#   6. the story's comparison (`--compare gpu_naive,cudnn_tf32`) with its verdicts and HTML report;
#   7. the depthwise kernels (issue 16) at the anchor shape N=8, C=O=G=4096, L=4096, K=4: the twins on
#      every output (fp32 and bf16, bf16 channel-last), `convlab bench --depthwise` in bf16 and fp32 with
#      the PyTorch cross-check of the cuDNN rows and in bf16 channel-last, the SASS of gpu_dw_fast (16-byte
#      loads and stores, no local memory). Their test suite (test_gpu_dw) and sanitizer shapes are in 3, 4.
# usage: scripts/device-check.sh BUILD_DIR     (OUT: the log folder, default ./device-check-out)
# environment: C1D_DEPS_PREFIX, a prefix holding Criterion's env.sh (see ../shared/device);
#              C1D_DEADLINE_S, seconds after which remaining steps are skipped (default 560; on the H200 on
#              2026-12-05 its first 23 steps took 342 s, and the fp32 depthwise cross-check ran past the
#              78 s a deadline of 420 left it, though it took 30 s alone: give the check a call of its own).
# Exit status 0 only when every step ran and passed; the summary and the bench table close the output.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=${1:?usage: scripts/device-check.sh BUILD_DIR}
out=${OUT:-$PWD/device-check-out}
mkdir -p "$out"
deadline=${C1D_DEADLINE_S:-560}
convlab=$build/harness/convlab
driver=$build/gpu/gpu_driver
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
  local t0=$SECONDS
  timeout "$limit" "$@" >"$log" 2>&1
  local rc=$?
  [ $rc -eq 0 ] && record "$name" "passed ($((SECONDS - t0))s)" || record "$name" "FAILED (exit $rc)"
  return $rc
}

nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit,clocks.max.sm --format=csv,noheader
echo "git: $(git rev-parse --short HEAD 2>/dev/null || echo '?')"

# 1. the bench, power and clocks beside it, and the PyTorch cross-check (conv_init inputs)
nvidia-smi dmon -s pc -d 1 >"$out/dmon.txt" 2>&1 &
dmon=$!
run "bench + PyTorch cross-check" 200 "$out/story.txt" \
  env CONVLAB="$convlab" bash scripts/crosscheck.sh "$out/story" --repeats 30 --quiet
kill "$dmon" 2>/dev/null
awk '$1 == "0" && $2 + 0 > 200 { n++; if ($2 > p) p = $2; if (m == 0 || $6 < m) m = $6 }
     END { printf "power max %s W, lowest SM clock above 200 W %s MHz (%d s, nvidia-smi dmon)\n", p, m, n }' \
  "$out/dmon.txt"

# 2. make run's command, timed (it builds first; the build is not timed here)
t0=$SECONDS
# (its estimate's parts and each stage's time, on stderr into the log: where the announced time is short)
run "make run's convlab run" 120 "$out/makerun.txt" env C1D_ESTIMATE_TRACE=1 C1D_TRACE_TIMES=1 \
  "$convlab" run --out "$out/makerun" --html
took=$((SECONDS - t0))
[ "$took" -lt 30 ] && record "make run under 30 s" "passed (${took}s)" || record "make run under 30 s" "FAILED (${took}s)"
grep -E '^CPU rows|^oracle' "$out/makerun.txt"

# 3. sanitizers
for tool in memcheck racecheck initcheck synccheck; do
  run "$tool gpu_driver sanitize" 120 "$out/sanitize-$tool.txt" \
    compute-sanitizer --tool "$tool" --error-exitcode 9 "$driver" sanitize
  grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize-$tool.txt" | tail -1
done
# the channel-last ring kernels over strips of 37 (the launcher gives these shapes 4): their rings refill
for tool in memcheck racecheck; do
  run "$tool gpu_driver sanitize, strips of 37" 120 "$out/sanitize-$tool-strip37.txt" \
    env C1D_DW_NLC_STRIP=37 compute-sanitizer --tool "$tool" --error-exitcode 9 "$driver" sanitize
  grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize-$tool-strip37.txt" | tail -1
done

# 4. the GPU test suites
for t in "$build"/tests/test_gpu*; do
  name=$(basename "$t")
  run "$name" 240 "$out/$name.txt" "$t" --jobs 1 --verbose --ascii
  grep -E 'Synthesis' "$out/$name.txt" | tail -1
  grep -E '^\[(FAIL|CRASH|ERR)' "$out/$name.txt" | head -10
  bad=$(grep '^\[SKIP\]' "$out/$name.txt" | grep -v ': a CUDA device is present$' | head -3)
  [ -n "$bad" ] && record "$name" "SKIPPED TESTS: $bad"
done

# 5. twins at the headline shape, the probe, the FMA ceiling, the SASS, the oracle against cuDNN float64
run "gpu_driver twins" 150 "$out/twins.txt" "$driver" twins
grep -E '^RESULT twin' "$out/twins.txt"
run "gpu_driver probe" 30 "$out/probe.txt" "$driver" probe
grep -E '^RESULT probe' "$out/probe.txt"
run "gpu_driver fma-ceiling" 30 "$out/fma-ceiling.txt" "$driver" fma-ceiling
grep -E '^FP32 FMA ceiling' "$out/fma-ceiling.txt"
run "SASS of the tensor-core kernels" 60 "$out/sass.txt" bash -c \
  "cuobjdump --dump-sass '$convlab' | grep -oE 'HGMMA[.A-Z0-9x]*|UTMALDG[.A-Z0-9]*' | sort | uniq -c | tee /dev/stderr | grep -q HGMMA"
cat "$out/sass.txt"
run "PyTorch float64" 90 "$out/torch.txt" python3 scripts/bench_f64_torch.py \
  --shape 32,256,256,8192,4,1,0 --repeats 20
grep -E '^RESULT (oracle|torch)' "$out/torch.txt"

# 6. the story's comparison, with verdicts and the HTML report (GPU rows and the TF32 model)
run "convlab run --compare --html" 150 "$out/run.txt" "$convlab" run --repeats 10 --html --out "$out/run" \
  --impl gpu_naive,gpu_tiled_smem,gpu_tf32_inputs,cudnn_fp32,cudnn_tf32,cudnn_tf32_fastest,gpu_fp32_fast,gpu_tf32,gpu_3xtf32 \
  --compare gpu_naive,cudnn_tf32
grep -A40 '^verdicts' "$out/run.txt" | head -60

# 7. the depthwise kernels (issue 16)
run "gpu_driver twins --depthwise" 60 "$out/twins_dw.txt" "$driver" twins --depthwise
grep -E '^RESULT twin' "$out/twins_dw.txt"
# the rows the table and the cross-check need (the cuDNN search row of the type is always added)
dw_rows=(bf16 gpu_dw_naive,gpu_dw_fast,cudnn_lowp f32 gpu_dw_naive,gpu_dw_fast,cudnn_fp32,cudnn_tf32)
for i in 0 2; do
  dt=${dw_rows[$i]}
  run "depthwise bench $dt + PyTorch cross-check" 90 "$out/dw_$dt.txt" \
    env CONVLAB="$convlab" bash scripts/crosscheck.sh "$out/dw_$dt" --depthwise --dtype "$dt" \
    --impl "${dw_rows[$((i + 1))]}" --repeats 20 --quiet
  grep -E '^(AGREE|DISAGREE|MISSING|torch_)' "$out/dw_$dt.txt"
done
run "depthwise bench bf16 channel-last" 60 "$out/dw_nlc.txt" "$convlab" bench --depthwise --dtype bf16 \
  --layout nlc --impl gpu_dw_naive,gpu_dw_fast --repeats 20 --quiet --out "$out/dw_nlc.json"
run "SASS of the depthwise kernels" 60 "$out/sass_dw.txt" bash scripts/sass_dw.sh "$convlab"
tail -1 "$out/sass_dw.txt"

echo
echo "=== convlab bench --depthwise (bf16, fp32, bf16 channel-last)"
for f in "$out/dw_bf16.txt" "$out/dw_f32.txt" "$out/dw_nlc.txt"; do
  sed -n '/^convlab bench:/,/^ms: median/p' "$f" | cut -c1-200
done
echo
echo "=== convlab bench (the headline shape)"
sed -n '/^convlab bench:/,/^ms: median/p' "$out/story.txt" | cut -c1-230
echo
echo "=== device-check summary (${SECONDS}s)"
status=0
for r in "${results[@]}"; do
  echo "  $r"
  case "$r" in *FAILED* | *SKIPPED*) status=1 ;; esac
done
exit $status
