#!/usr/bin/env bash
# Runs a command as this machine would on an AVX2-only CPU of its kind (issue 21: such an AMD EPYC is one
# of the machines CI may land on), so that `scripts/emulate_avx2.sh make test` tries the suites there:
#   - oneDNN capped at AVX2 (ONEDNN_MAX_CPU_ISA; PyTorch's fp32 convolutions run its AVX2 kernels);
#   - OpenBLAS's Haswell SGEMM (OPENBLAS_CORETYPE), PyTorch's ATen kernels for AVX2 (ATEN_CPU_CAPABILITY);
#   - convlab's float64 oracle on its AVX2 kernel (C1D_ORACLE_KERNEL);
#   - PyTorch's bf16 convolutions on its own path, with oneDNN off (emulate_avx2/sitecustomize.py, on
#     PYTHONPATH: PyTorch 1.13 picks oneDNN's bf16 by the CPU's AVX-512 alone, and the capped oneDNN fails).
# Not emulated: convlab's row loops compiled for x86-64-v4 (numerics/clones.h: every clone gives the same
# bits) and BLIS's kernels (chosen by the CPU; on an AMD EPYC with AVX-512 BLIS 0.9 already runs its zen3,
# AVX2, ones).
# usage: scripts/emulate_avx2.sh COMMAND [ARG...]
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: scripts/emulate_avx2.sh COMMAND [ARG...]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
export ONEDNN_MAX_CPU_ISA=AVX2 DNNL_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell ATEN_CPU_CAPABILITY=avx2
export C1D_ORACLE_KERNEL=avx2
export PYTHONPATH=$here/emulate_avx2${PYTHONPATH:+:$PYTHONPATH}
exec "$@"
