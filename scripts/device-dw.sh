#!/usr/bin/env bash
# Issue 24's device check, in one call: the depthwise and grouped kernels' speed against the copy and
# against cuDNN's fastest and PyTorch, their profile, and (with "tests") their bits and SASS.
# Run from the repository root with a carried build (tests find it where it was made: link it there).
# usage: scripts/device-dw.sh BUILD_DIR [STEP...]
#   steps (default: all but strips, vectors and rolling):
#                         sweep   bench_dw: gpu_dw_fast against the copy at the anchor and the decode-like
#                                 grid, bf16 and fp32, (N, C, L) and channel-last; SiLU and states at
#                                 the anchor, and bf16 over the grid with SiLU, states and bias
#                         grid    bench_dw over the anchor and the decode-like grid in the three types and
#                                 both layouts, each shape timed as one launch and in a graph of launches
#                                 (the stream column: what a decoder replaying CUDA graphs sees)
#                         profile ncu on gpu_dw_fast at the anchor (bf16 and fp32, both layouts) and
#                                 at three of the grid's weakest shapes
#                         bench   convlab bench --depthwise at the anchor (bf16 and fp32, both layouts),
#                                 with the PyTorch rows where PyTorch has CUDA
#                         grouped convlab bench --groups G at C=O=1024..4096, G=4..64 (bf16 and fp32)
#                         strips  the channel-last ring kernel's sweep under fixed strips of 1..256 positions
#                                 (DW_STRIPS: the list)
#                         vectors 16-bit x: the L = 1 step in 8-byte vectors (the launcher's choice)
#                                 against 16-byte ones (C1D_DW_VECTOR_BYTES=16), bf16 and fp16
#                         rolling the channel-last ring kernel with running sums against the window one
#                                 (C1D_DW_NLC_KERNEL=rolling / window), the three types, and under
#                                 fixed strips (DW_STRIPS: the list)
#                         pairs   16-bit channel-last: the ring in thread pairs (C1D_DW_NLC_KERNEL=pairs)
#                                 against the window kernel, bf16 and fp16, and under fixed strips
#                                 (DW_STRIPS: the list)
#                         variants SiLU and initial states: at the anchor (bf16 and fp32, both layouts)
#                                 and over the grid (bf16, with bias; also part of sweep)
#                         tile    the channel-last tile kernel (C1D_DW_NLC_KERNEL=tile) against the
#                                 launcher's strip kernels (=ring) over the grid, the three types, and
#                                 in bf16 under tiles of 8 and 32 channel vectors
#                         flat    the channel-last flat kernel (C1D_DW_NLC_KERNEL=flat) against the
#                                 launcher's strip kernels (=ring) over the grid, the three types, both
#                                 clocks: where it wins sets DW_NLC_FLAT_MAX (gpu/dw_fast_kernels.h)
#                         tests   test_gpu_dw, gpu_driver twins --depthwise (and under the row kernel)
#                         ringtests test_gpu_dw's twin tests under each channel-last ring kernel forced,
#                                 and under the flat kernel
#                         sass    scripts/sass_dw.sh (needs cuobjdump)
# environment: OUT, the log folder (default ./device-dw-out); C1D_DEPS_PREFIX, Criterion's env.sh prefix.
# Exit status 0 only when every step passed; one line per step closes the output.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=${1:?usage: scripts/device-dw.sh BUILD_DIR [STEP...]}
shift
steps=${*:-sweep profile bench grouped tests ringtests sass}
out=${OUT:-$PWD/device-dw-out}
mkdir -p "$out"
if [ -n "${C1D_DEPS_PREFIX:-}" ]; then
  # shellcheck disable=SC1091
  source "$C1D_DEPS_PREFIX/env.sh"
fi
convlab=$build/harness/convlab
bench_dw=$build/bench/bench_dw
results=()
failed=0
step() { # step NAME LOG CMD...: the output to LOG and to stdout
  local name=$1 log=$2 t0=$SECONDS rc
  shift 2
  echo "=== $name"
  "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] && results+=("$name: passed ($((SECONDS - t0)) s)") || { results+=("$name: FAILED (exit $rc)"); failed=1; }
}
wants() { [[ " $steps " == *" $1 "* ]]; }

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "git: $(git rev-parse --short HEAD 2>/dev/null || echo '?')"

if wants sweep; then
  for dt in bf16 f32; do
    for layout in ncl nlc; do
      step "sweep $dt $layout" "$out/sweep-$dt-$layout.txt" "$bench_dw" --dtype $dt --layout $layout --shapes all
    done
    # the (N, C, L) row kernel that the flat one replaced where both apply (gpu/dw_fast.cu)
    step "sweep $dt ncl rows" "$out/sweep-$dt-ncl-rows.txt" env C1D_DW_NCL_KERNEL=rows "$bench_dw" --dtype $dt \
      --layout ncl --shapes all
    # the channel-last register kernel that the ring kernel replaced
    step "sweep $dt nlc registers" "$out/sweep-$dt-nlc-registers.txt" env C1D_DW_NLC_KERNEL=registers \
      "$bench_dw" --dtype $dt --layout nlc --shapes all
    # the kernels of every type combination where the PLAIN ones run (the step and the ring)
    for layout in ncl nlc; do
      step "sweep $dt $layout general" "$out/sweep-$dt-$layout-general.txt" env C1D_DW_PLAIN=0 "$bench_dw" \
        --dtype $dt --layout $layout --shapes all
    done
  done
fi

if wants sweep || wants variants; then
  for layout in ncl nlc; do # Mamba's configuration: SiLU and initial states, over the decode-like grid
    step "decode bf16 $layout silu+states" "$out/decode-bf16-$layout-silu-states.txt" "$bench_dw" --dtype bf16 \
      --layout $layout --shapes decode --activation silu --initial-states --bias
  done
  for layout in ncl nlc; do
    for dt in bf16 f32; do
      step "anchor $dt $layout silu/states" "$out/anchor-$dt-$layout-variants.txt" bash -c \
        "'$bench_dw' --dtype $dt --layout $layout --shapes anchor &&
         '$bench_dw' --dtype $dt --layout $layout --shapes anchor --activation silu &&
         '$bench_dw' --dtype $dt --layout $layout --shapes anchor --initial-states &&
         '$bench_dw' --dtype $dt --layout $layout --shapes anchor --activation silu --initial-states --bias"
    done
  done
fi

if wants grid; then # the three types in both layouts, one launch and a stream of launches per shape
  for dt in bf16 f32 f16; do
    for layout in ncl nlc; do
      step "grid $dt $layout" "$out/grid-$dt-$layout.txt" "$bench_dw" --dtype $dt --layout $layout --shapes all
    done
  done
fi

if wants strips; then # the channel-last ring kernel under fixed strips, against the launcher's rule
  for dt in bf16 f32; do
    for strip in ${DW_STRIPS:-1 2 4 8 16 32 64 128 256}; do
      step "strip $strip $dt nlc" "$out/strip-$strip-$dt-nlc.txt" env C1D_DW_NLC_STRIP=$strip "$bench_dw" --dtype $dt \
        --layout nlc --shapes all
    done
  done
fi

if wants vectors; then # the L = 1 step's 8-byte vectors (16-bit x) against 16-byte ones
  for dt in bf16 f16; do
    for layout in ncl nlc; do
      step "sweep $dt $layout" "$out/sweep-$dt-$layout.txt" "$bench_dw" --dtype $dt --layout $layout --shapes all
      step "sweep $dt $layout vectors=16" "$out/sweep-$dt-$layout-vb16.txt" env C1D_DW_VECTOR_BYTES=16 \
        "$bench_dw" --dtype $dt --layout $layout --shapes all
    done
  done
fi

# ring_sweeps "TYPES" KERNEL...: the channel-last sweep of each type under each ring kernel forced
# (C1D_DW_NLC_KERNEL), then bf16 under the first kernel and fixed strips (DW_STRIPS: the list)
ring_sweeps() {
  local types=$1 dt kernel strip
  shift
  for dt in $types; do
    for kernel in "$@"; do
      step "sweep $dt nlc $kernel" "$out/sweep-$dt-nlc-$kernel.txt" env C1D_DW_NLC_KERNEL=$kernel "$bench_dw" \
        --dtype $dt --layout nlc --shapes all
    done
  done
  for strip in ${DW_STRIPS:-4 8 16 32 64}; do
    step "strip $strip bf16 nlc $1" "$out/strip-$1-$strip-bf16-nlc.txt" env C1D_DW_NLC_KERNEL=$1 \
      C1D_DW_NLC_STRIP=$strip "$bench_dw" --dtype bf16 --layout nlc --shapes all
  done
}

if wants rolling; then # the ring kernels side by side: running sums, and the K-row window
  ring_sweeps "bf16 f16 f32" rolling window
fi

if wants pairs; then # the ring kernel in thread pairs against the window one (16-bit x)
  ring_sweeps "bf16 f16" pairs window
  for kernel in pairs window; do # the taps the grid lacks, at the anchor and a medium problem
    for shape in 8,4096,4096,3 8,4096,4096,6 8,4096,4096,8 8,2048,512,3 8,2048,512,6 8,2048,512,8; do
      step "shape $shape bf16 nlc $kernel" "$out/shape-$shape-bf16-nlc-$kernel.txt" env C1D_DW_NLC_KERNEL=$kernel \
        "$bench_dw" --dtype bf16 --layout nlc --shape $shape
    done
  done
fi

if wants profile && command -v ncu >/dev/null; then
  sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats
            --section WarpStateStats --section SchedulerStats)
  for cfg in "bf16 ncl" "bf16 nlc" "f32 ncl" "f32 nlc"; do
    set -- $cfg
    step "ncu $1 $2" "$out/ncu-$1-$2.txt" ncu --kernel-name regex:dw_fast --launch-skip 1 --launch-count 1 \
      "${sections[@]}" "$bench_dw" --dtype "$1" --layout "$2" --shapes anchor --repeats 3
  done
  # the grid's weakest shapes: channel-last at medium sizes, short (N, C, L) rows, the L = 1 step
  for cfg in "bf16 nlc 8,2048,512,4" "bf16 ncl 64,8192,64,4" "bf16 ncl 64,8192,1,4"; do
    set -- $cfg
    step "ncu $1 $2 $3" "$out/ncu-$1-$2-$3.txt" ncu --kernel-name regex:dw_fast --launch-skip 1 --launch-count 1 \
      "${sections[@]}" "$bench_dw" --dtype "$1" --layout "$2" --shape "$3" --repeats 3
  done
  # the smallest problems, PLAIN kernels against those of every combination: where the warps stall
  # (no_instruction: waiting for the kernel's code)
  reasons="no_instruction imc_miss long_scoreboard short_scoreboard wait branch_resolving lg_throttle membar drain"
  metrics=gpu__time_duration.sum,smsp__inst_executed.sum,sm__cycles_active.avg
  for r in $reasons; do metrics+=,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio; done
  stalls=(--metrics "$metrics")
  for plain in 1 0; do
    for cfg in "bf16 ncl 1,2048,1,4" "bf16 nlc 1,2048,64,4" "f32 nlc 1,2048,64,4"; do
      set -- $cfg
      step "ncu stalls plain=$plain $1 $2 $3" "$out/ncu-stalls-$plain-$1-$2-$3.txt" env C1D_DW_PLAIN=$plain \
        ncu --kernel-name regex:dw_fast --launch-skip 1 --launch-count 1 "${stalls[@]}" "$bench_dw" --dtype "$1" \
        --layout "$2" --shape "$3" --repeats 3
    done
  done
fi

if wants bench; then
  for cfg in "bf16 ncl" "f32 ncl" "bf16 nlc" "f32 nlc"; do
    set -- $cfg
    step "convlab bench --depthwise $1 $2" "$out/bench-$1-$2.txt" "$convlab" bench --depthwise --dtype "$1" \
      --layout "$2" --impl gpu_dw_fast,gpu_dw_naive --repeats 30 --quiet
  done
fi

if wants tests; then
  step "test_gpu_dw" "$out/test_gpu_dw.log" "$build/tests/test_gpu_dw" --jobs 4 --verbose=0
  step "test_gpu_dw twins, row kernel" "$out/test_gpu_dw-rows.log" env C1D_DW_NCL_KERNEL=rows \
    "$build/tests/test_gpu_dw" --jobs 4 --verbose=0 --filter 'gpu_dw/the_twins*'
  step "twins --depthwise" "$out/twins.txt" "$build/gpu/gpu_driver" twins --depthwise
  step "twins --depthwise, row kernel" "$out/twins-rows.txt" env C1D_DW_NCL_KERNEL=rows "$build/gpu/gpu_driver" \
    twins --depthwise
fi

# against_ring KERNEL: the channel-last grid of the three types under KERNEL forced (C1D_DW_NLC_KERNEL) and
# under the launcher's strip kernels (=ring)
against_ring() {
  local dt kernel
  for dt in bf16 f32 f16; do
    for kernel in "$1" ring; do
      step "grid $dt nlc $kernel" "$out/grid-$dt-nlc-$kernel.txt" env C1D_DW_NLC_KERNEL=$kernel "$bench_dw" \
        --dtype $dt --layout nlc --shapes all
    done
  done
}

if wants tile; then
  against_ring tile
  for v in 8 32; do
    step "grid bf16 nlc tile, $v vectors" "$out/grid-bf16-nlc-tile-v$v.txt" env C1D_DW_NLC_KERNEL=tile \
      C1D_DW_NLC_TILE_VECTORS=$v "$bench_dw" --dtype bf16 --layout nlc --shapes all
  done
fi

if wants flat; then
  against_ring flat
fi

if wants ringtests; then
  for ring in rolling window pairs flat; do # each kernel on every type and K (the launcher's choice mixes them)
    step "test_gpu_dw twins, $ring kernel" "$out/test_gpu_dw-$ring.log" env C1D_DW_NLC_KERNEL=$ring \
      "$build/tests/test_gpu_dw" --jobs 4 --verbose=0 --filter 'gpu_dw/the_*'
  done
fi

if wants sass && command -v cuobjdump >/dev/null; then
  step "sass_dw" "$out/sass_dw.txt" bash scripts/sass_dw.sh "$convlab"
fi

if wants grouped; then
  for dt in bf16 f32; do
    for C in 1024 4096; do
      for G in 4 16 64; do
        step "grouped $dt C=$C G=$G" "$out/grouped-$dt-$C-$G.txt" "$convlab" bench --groups "$G" --cin "$C" \
          --cout "$C" --batch 8 --length 4096 --taps 4 --dtype "$dt" --impl gpu_grouped --repeats 3 --quiet
      done
    done
  done
fi

printf '%s\n' "${results[@]}"
exit "$failed"
