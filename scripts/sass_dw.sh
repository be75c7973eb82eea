#!/usr/bin/env bash
# The SASS of the depthwise and grouped kernels in a convlab binary (issue 16): every vector kernel of
# gpu_dw_fast loads 16 bytes at a time (LDG.E.128) and stores them whole (STG.E.EF.128 or STG.E.128, or
# STG.E.64 for 4 bf16/fp16 outputs); the 8-byte copy of the PLAIN step kernel (16-bit x, template
# argument VB = 8) and the channel-last pairs kernel (half a row a thread) load 8 or 16 (LDG.E.64 or
# .128); none of them touches local memory (LDL/STL: spills,
# or arrays indexed at run time). Needs cuobjdump (the device machine has it). One line per kernel, then a verdict.
# usage: scripts/sass_dw.sh BINARY        exit status 0 when every check holds
set -uo pipefail
bin=${1:?usage: scripts/sass_dw.sh BINARY}
command -v cuobjdump >/dev/null || { echo "sass_dw: cuobjdump not found" >&2; exit 2; }
cuobjdump --dump-sass "$bin" | awk '
  /Function :/ { f = $3; next }
  f ~ /(dw_fast_|dw_naive_kernel|grouped_kernel)/ {
    seen[f] = 1
    if ($0 ~ /LDG\.E\.128/) ldg[f]++
    if ($0 ~ /LDG\.E\.64/) ldg8[f]++
    if ($0 ~ /STG\.E[.A-Z]*\.(128|64)/) stg[f]++
    if ($0 ~ /[^A-Z.](LDL|STL)[. ]/) local[f]++
  }
  END {
    bad = 0; vectors = 0; kernels = 0
    for (f in seen) {
      kernels++
      vec = f ~ /dw_fast_(ncl|ncl_short|nlc|nlc_rolling|nlc_pairs|nlc_registers|nlc_dilated|nlc_flat|nlc_tile|step)_kernel/
      vectors += vec
      eight = f ~ /Lb1ELi8EE/ || f ~ /nlc_pairs_kernel/ # dw_fast_step_kernel<TX, K, true, 8>, the pairs
      ok = !local[f] && (!vec || ((ldg[f] > 0 || (eight && ldg8[f] > 0)) && stg[f] > 0))
      bad += !ok
      printf "%-8s %-70s LDG.E.128 %3d  wide STG %3d  LDL/STL %d\n", ok ? "ok" : "FAILED", f, ldg[f], stg[f], local[f]
    }
    # 3 element types of x times K = 1..8 times 14 paths ((N, C, L) rows and flat, channel-last window
    # ring, rolling ring, registers, flat and tile, channel-last dilated, the L = 1 step, and the PLAIN
    # window ring, rolling ring, flat, tile and step), and for bf16 and fp16 the PLAIN step in 8-byte
    # vectors and the pairs kernel (2 x 2 x 8); the per-output kernels move one element at a time
    printf "sass_dw: %d kernels, %d vector kernels (368 expected); %s\n", kernels, vectors,
           bad ? bad " fail the checks" : "every vector kernel moves whole vectors, no local memory"
    exit (bad || vectors != 368)
  }'
