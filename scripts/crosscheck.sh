#!/usr/bin/env bash
# The PyTorch cross-check, on a machine with a CUDA GPU and PyTorch: convlab bench on the headline shape
# (or the shape flags given after the output directory) saves its inputs and a JSON report, then
# crosscheck_torch.py runs the same inputs through PyTorch's conv1d with TF32 off and on and compares the
# relative L2 errors (cudnn vs torch within 10 %, the TF32 model vs observed within 20 %).
# Usage: scripts/crosscheck.sh [OUT_DIR [convlab bench flags...]]    (CONVLAB=path/to/convlab)
# Exit status: crosscheck_torch.py's (0 agree, 1 disagree, 2 error), or convlab's when it fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-out/crosscheck}
[ $# -gt 0 ] && shift
convlab=${CONVLAB:-$here/../build/harness/convlab}
mkdir -p "$out"
"$convlab" bench --impl cudnn_fp32,cudnn_tf32,cublas_im2col_fp32,cublas_im2col_tf32,gpu_tf32_inputs \
  --save-inputs "$out" --out "$out/bench.json" "$@" | tee "$out/bench.txt"
/usr/bin/env python3 "$here/crosscheck_torch.py" --inputs "$out" --bench "$out/bench.json" \
  --out "$out/crosscheck.json" | tee "$out/crosscheck.txt"
exit "${PIPESTATUS[0]}"
