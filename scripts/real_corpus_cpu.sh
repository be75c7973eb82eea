#!/usr/bin/env bash
# The real-arithmetic null corpus on the CPU, as CI runs it (ctest's real_corpus_cpu; issue 21, point 3):
# PyTorch 1.13's CPU convolutions (scripts/real_corpus.py --device cpu) and every oneDNN implementation
# (scripts/onednn_impls.sh), each output explained by convlab. Every output is correct, so any bug verdict
# (or non-finite, inconclusive, or a failed run) fails. Only "no bug" is asserted, never which rounding
# verdict: that depends on the CPU's library path (AVX-512 or AVX2 kernels, oneDNN's bf16 or PyTorch's own).
#   16.8 M outputs: PyTorch fp32 through oneDNN, fp32 with oneDNN off (im2col + OpenBLAS SGEMM, under each
#     OPENBLAS_CORETYPE this CPU runs: Cooperlake, SkylakeX, Haswell, Sandybridge, Nehalem, Core2, Prescott),
#     autocast bf16 with a bias, BLIS's SGEMM on im2col (libblis-dev; its kernels for this CPU); every oneDNN
#     implementation on the dense problem but ref:any
#   2.1 M: the same PyTorch fp32 and autocast sources, bf16 tensors with a bias and depthwise bf16 on both
#     CPU paths; every oneDNN implementation but ref:any on the dilated (D=2) and grouped (G=4) problems
#   0.26 M: every oneDNN implementation, ref:any too (its reference loop does about 0.2 GFLOP/s)
#   33.5 M: convlab's own CPU rows (its float32 orders, TF32 and 3xTF32 models, onednn_fp32), conv_init
#     inputs; and at 16.8 M on uniform, integer and ill-conditioned inputs
# usage: scripts/real_corpus_cpu.sh BUILD_DIR
#   OUT: the logs (default BUILD_DIR/real-corpus-cpu); C1D_PYTHON: the Python with PyTorch (default
#   /usr/bin/python3, Debian's python3-torch); C1D_SGEMM_CORETYPES: real_corpus.py's --sgemm-coretypes at
#   16.8 M (default auto)
# Exit 0 when nothing is called a bug; 1 when something is (or a run failed); 77 (ctest's skip) when
# python3-torch or oneDNN is absent, after the part that can run here has run and passed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=${1:?usage: scripts/real_corpus_cpu.sh BUILD_DIR}
build=$(cd "$build" && pwd) || exit 1
out=${OUT:-$build/real-corpus-cpu}
py=${C1D_PYTHON:-/usr/bin/python3}
convlab=$build/harness/convlab
rm -rf "$out"
mkdir -p "$out"
rc=0
missing=()
start=$EPOCHREALTIME
took() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f s", b - a }'; }

if ! "$py" -c 'import numpy, torch' 2>"$out/torch-import.txt"; then
  missing+=("PyTorch ($py cannot import numpy and torch: $(tail -1 "$out/torch-import.txt"); Debian: apt-get install python3-torch)")
else
  for part in "16M dense ${C1D_SGEMM_CORETYPES:-auto}" "2M dense,lowp,dw none"; do
    read -r size sources cores <<<"$part"
    t0=$EPOCHREALTIME
    echo "== PyTorch's CPU convolutions at $size: $sources"
    "$py" scripts/real_corpus.py --convlab "$convlab" --out "$out/torch-$size" --device cpu --sizes "$size" \
      --sources "$sources" --sgemm-coretypes "$cores"
    r=$?
    echo "== ($(took "$t0"))"
    [ $r -eq 0 ] || { echo "real_corpus_cpu: real_corpus.py --sizes $size exited $r"; rc=1; }
  done
fi

# convlab's own CPU rows (its orders, TF32 and 3xTF32 models, oneDNN's pick) where the tails are probed a
# million times deeper than on small problems: the headline's C, K and L with 16 (or 8) batch rows.
t0=$EPOCHREALTIME
own_rows=naive,tap_partial,kahan,tf32_inputs,kahan_blocked,split_3xtf32
"$convlab" list | grep -q '^onednn_fp32 .* yes$' && own_rows+=,onednn_fp32
own_count=$(tr ',' '\n' <<<"$own_rows" | wc -l)
# conv_init (the story's inputs) at 33.5 M outputs, the other distributions at 16.8 M
for part in "33.5M 16 conv_init" "16.8M 8 uniform" "16.8M 8 integer" "16.8M 8 ill_conditioned"; do
  read -r size batch dist <<<"$part"
  echo "== convlab's own CPU rows at $size outputs, $dist inputs: $own_rows"
  dir=$out/own-$size-$dist
  if "$convlab" run --impl "$own_rows" --batch "$batch" --length 8192 --cpu-batch-rows 0 --dist "$dist" \
      --out "$dir" >"$dir.txt" 2>&1; then
    # report.csv's verdict column, found by its header: every row ran, and none is a bug
    awk -F, -v rows="$own_count" -v tag="$size $dist" '
      NR == 1 { for (i = 1; i <= NF; i++) if ($i == "verdict") v = i; next }
      { n++; printf "%s %-14s %s\n", tag, $1, $v; if ($5 != "ok" || $v == "" || $v ~ /^(bug|non-finite|inconclusive)/) bad++ }
      END { exit (!v || n != rows || bad > 0) }' "$dir/report.csv" ||
      { echo "real_corpus_cpu: a row of convlab's own at $size ($dist) is a bug or did not run ($dir)"; rc=1; }
  else
    tail -3 "$dir.txt"
    echo "real_corpus_cpu: convlab run at $size ($dist) failed (its output: $dir.txt)"
    rc=1
  fi
done
echo "== ($(took "$t0"))"

t0=$EPOCHREALTIME
echo "== every oneDNN implementation (C1D_ONEDNN_IMPL)"
OUT=$out/onednn C1D_ONEDNN_CASES=dense:8192,dilated:1024,grouped:1024,dense:1024:1 C1D_ONEDNN_REF_MAX=300000 \
  bash scripts/onednn_impls.sh "$build"
r=$?
echo "== ($(took "$t0"))"
case $r in
  0) ;;
  77) missing+=("oneDNN (see the line above)") ;;
  *) echo "real_corpus_cpu: onednn_impls.sh exited $r"; rc=1 ;;
esac

echo "real_corpus_cpu: $(took "$start") in all"
[ $rc -ne 0 ] && { echo "real_corpus_cpu: FAILED (a correct output called a bug, or a run failed: above)"; exit 1; }
if [ ${#missing[@]} -gt 0 ]; then
  part=" in part (what ran passed)"
  [ ${#missing[@]} -eq 2 ] && part=""
  printf "real_corpus_cpu: SKIPPED$part: not here: %s\n" "${missing[@]}"
  exit 77
fi
echo "real_corpus_cpu: no correct output called a bug"
