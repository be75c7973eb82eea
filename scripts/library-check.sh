#!/usr/bin/env bash
# The library baselines on a GPU machine, in one go (what issue 5's closing figures came from): the
# library tests, the bench tests, the PyTorch cross-check on the headline shape (cudnn/cublas rows and
# the TF32 model, CPU oracle) and the full bench of every GPU implementation (GPU oracle when built).
# Usage: scripts/library-check.sh [OUT_DIR]     (BUILD=build dir with convlab and the tests, default build)
# Exit status: the first failing step's, else 0. Logs under OUT_DIR (default out/library-check).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-$here/../build}
out=${1:-out/library-check}
mkdir -p "$out/xc"
rc=0
step() { local r; "$@"; r=$?; [ "$rc" -eq 0 ] && rc=$r; return 0; }
step bash -c "'$build/tests/test_gpu_libraries' --jobs 1 --verbose > '$out/test_gpu_libraries.log' 2>&1"
step bash -c "'$build/tests/test_gpu_bench' --jobs 1 --verbose > '$out/test_gpu_bench.log' 2>&1"
step env CONVLAB="$build/harness/convlab" bash "$here/crosscheck.sh" "$out/xc" \
  --impl cudnn_fp32,cudnn_tf32,cublas_im2col_fp32,cublas_im2col_tf32,gpu_tf32_inputs --oracle cpu
step bash -c "'$build/harness/convlab' bench --out '$out/bench_all.json' | tee '$out/bench_all.txt'"
tail -n 2 "$out/test_gpu_libraries.log" "$out/test_gpu_bench.log"
exit "$rc"
