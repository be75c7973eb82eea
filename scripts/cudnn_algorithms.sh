#!/usr/bin/env bash
# Every cuDNN forward algorithm, one at a time (C1D_CUDNN_ALGO), through convlab's cudnn rows, each output
# explained: float32 data with FMA math (cudnn_fp32) and TF32 allowed (cudnn_tf32), bf16 and fp16 tensors
# with a bias (cudnn_lowp: cuDNN's convolution, then the bias added in float32 and rounded, as PyTorch
# does). Issue 21's point 4: no algorithm's correct output may be called a bug. An algorithm cuDNN does not
# offer for a shape and math type is listed as such. Besides C=O=256, float32 with few input channels
# (C=4 O=64, C=1 O=32): FFT errors, of one size along a row, pass a direct sum's on outputs with few terms
# (the explainer's transform arithmetic, scripts/fft_null_check.py).
# usage: scripts/cudnn_algorithms.sh BUILD_DIR   (OUT: the log folder, default ./cudnn-algorithms-out;
#        C1D_BATCHES: batch sizes of the float32 shape, default 8,32 (16.8 M and 67 M outputs at C=O=256
#        L=8192 K=4); C1D_LOWP_BATCHES: the bf16/fp16 ones, default 8; C1D_FEW_BATCHES: the few-channel
#        ones, default 32 (16.8 M and 8.4 M outputs))
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=${1:?usage: scripts/cudnn_algorithms.sh BUILD_DIR}
out=${OUT:-$PWD/cudnn-algorithms-out}
mkdir -p "$out"
algos="IMPLICIT_GEMM IMPLICIT_PRECOMP_GEMM GEMM DIRECT FFT FFT_TILING WINOGRAD WINOGRAD_NONFUSED"
rc=0
verdicts() { # the verdict (or skip reason) of each row in a run's text output
  sed -n '/^verdicts/,$p' "$1" | grep -E '^[a-z0-9_]+ +[a-z]' | grep -v '^convlab ' | sed -E 's/^([a-z0-9_]+) +([^:]+):?.*/\1 \2/'
  grep -E '^[a-z0-9_]+ +(skipped|FAILED): ' "$1" |
    sed -E 's/^([a-z0-9_]+) +[a-zA-Z]+: (.*does not offer.*)/\1 not-offered/; s/^([a-z0-9_]+) +([a-zA-Z]+): (.*)/\1 \2 (\3)/' |
    cut -c1-160
}
sweep() { # dtype impl batches cin cout extra-args...
  local dt=$1 impl=$2 batches=$3 cin=$4 cout=$5
  shift 5
  for n in ${batches//,/ }; do
    for a in $algos; do
      local log="$out/$dt-c$cin-n$n-$a.txt" t0=$SECONDS
      C1D_CUDNN_ALGO=$a "$build/harness/convlab" run --impl "$impl" --batch "$n" --cin "$cin" --cout "$cout" \
        --length 8192 --taps 4 "$@" >"$log" 2>&1
      verdicts "$log" | while read -r row v; do
        printf '%-5s C=%-4s %-9s %-22s %-18s %s (%d s)\n' "$dt" "$cin" "$((n * cout * 8192))" "$a" "$row" "$v" \
          $((SECONDS - t0))
      done
    done
  done
}
{
  sweep f32 cudnn_fp32,cudnn_tf32 "${C1D_BATCHES:-8,32}" 256 256
  sweep f32 cudnn_fp32,cudnn_tf32 "${C1D_FEW_BATCHES:-32}" 4 64
  sweep f32 cudnn_fp32,cudnn_tf32 "${C1D_FEW_BATCHES:-32}" 1 32
  sweep bf16 cudnn_lowp "${C1D_LOWP_BATCHES:-8}" 256 256 --bias --dtype all=bf16
  sweep f16 cudnn_lowp "${C1D_LOWP_BATCHES:-8}" 256 256 --bias --dtype all=f16
} | tee "$out/table.txt"
grep -E ' (bug|non-finite|inconclusive)' "$out/table.txt" && rc=1
exit $rc
