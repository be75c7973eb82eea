#!/usr/bin/env bash
# The PyTorch cross-check, on a machine with a CUDA GPU and PyTorch: convlab bench on the headline shape
# (or the shape flags given after the output directory) saves its inputs and a JSON report, then
# crosscheck_torch.py runs the same inputs through PyTorch's conv1d with TF32 off and on and compares the
# relative L2 errors (cudnn vs torch within 10 %, the TF32 model vs observed within 20 %).
# Usage: scripts/crosscheck.sh [OUT_DIR [convlab bench flags...]]    (CONVLAB=path/to/convlab)
# Exit status: crosscheck_torch.py's when non-zero (1 disagree, 2 error), else convlab bench's.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-out/crosscheck}
[ $# -gt 0 ] && shift
convlab=${CONVLAB:-$here/../build/harness/convlab}
mkdir -p "$out" && rm -f "$out/bench.json" "$out/crosscheck.json"
# Every GPU implementation of tier main and variant unless the flags say --impl (cuDNN's fastest rows
# and the TF32 model gpu_tf32_inputs are always added; cudnn_fp32 and cudnn_tf32, which the comparison
# needs, are main rows). A failed row still leaves bench.json.
# Inputs: the story's (--dist conv_init: x ~ N(0,1), w ~ U(+-1/sqrt(C*K)), nn.Conv1d's initialisation)
# unless the flags choose another; relative L2 does not depend on the scale, allclose's failures do.
dist=(--dist conv_init)
for a in "$@"; do case "$a" in --dist|--dist=*) dist=() ;; esac; done
"$convlab" bench "${dist[@]}" --save-inputs "$out" --out "$out/bench.json" "$@" | tee "$out/bench.txt"
bench_rc=${PIPESTATUS[0]}
[ -f "$out/bench.json" ] || exit "$bench_rc"
/usr/bin/env python3 "$here/crosscheck_torch.py" --inputs "$out" --bench "$out/bench.json" \
  --out "$out/crosscheck.json" | tee "$out/crosscheck.txt"
rc=${PIPESTATUS[0]}
[ "$rc" -ne 0 ] && exit "$rc"
exit "$bench_rc"
