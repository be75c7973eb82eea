#!/usr/bin/env bash
# Issue 21's GPU evidence in one go: no correct output called a bug, on the H200.
#   1. make run's job (`convlab run --out DIR --html`, every main implementation on the headline shape),
#      timed, with every verdict it prints;
#   2. the real-library null corpus (scripts/real_corpus.py): PyTorch/cuDNN outputs in TF32, FP32,
#      FP32 with cudnn.benchmark, autocast bf16/fp16 with a bias, bf16/fp16 tensors with a bias, depthwise
#      bf16 channels_last with a bias, at 2 M, 16.8 M and 67 M outputs, each explained by convlab (timed);
#   3. with C1D_DEPS_PREFIX (Criterion), the GPU suites that judge real libraries: test_gpu_zoo, test_gpu_dw.
# usage: scripts/device-verdicts.sh BUILD_DIR [SIZES]   (OUT: the log folder, default ./device-verdicts-out;
#        SIZES: real_corpus.py's --sizes, default 2M,16M,67M; C1D_STEPS: which of run,corpus,tests;
#        C1D_SOURCES: real_corpus.py's --sources; C1D_TRACE_MARKS=K: each verdict's first K marked elements, in run_stderr.txt and trace.txt)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=${1:?usage: scripts/device-verdicts.sh BUILD_DIR [SIZES]}
sizes=${2:-2M,16M,67M}
steps=${C1D_STEPS:-run,corpus,tests}
out=${OUT:-$PWD/device-verdicts-out}
mkdir -p "$out"
rc=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "git: $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) CPU threads"
if [[ $steps == *run* ]]; then
  echo "=== make run's job"
  t0=$SECONDS
  "$build/harness/convlab" run --out "$out/run" --html >"$out/run.txt" 2>"$out/run_stderr.txt" || rc=1
  echo "make run's job: $((SECONDS - t0)) s"
  sed -n '/^verdicts/,$p' "$out/run.txt" | grep -E '^[a-z0-9_]+ +[a-z]' | awk '{print $2}' | sort | uniq -c
  grep -E '^[a-z0-9_]+ +(bug|non-finite|inconclusive)' "$out/run.txt" && rc=1
  rm -rf "$out/run"
fi
if [[ $steps == *corpus* ]]; then
  echo "=== real-library corpus ($sizes)"
  PYTHONUNBUFFERED=1 python3 scripts/real_corpus.py --convlab "$build/harness/convlab" --out "$out/corpus" \
    --sizes "$sizes" --sources "${C1D_SOURCES:-dense,lowp,dw}" 2>&1 | tee "$out/corpus.txt" || rc=1
  mv "$out/corpus/corpus.json" "$out/corpus/trace.txt" "$out/" 2>/dev/null
  rm -rf "$out/corpus"
fi
if [[ $steps == *tests* && -n ${C1D_DEPS_PREFIX:-} ]]; then
  # shellcheck disable=SC1091
  source "$C1D_DEPS_PREFIX/env.sh"
  for t in test_gpu_zoo test_gpu_dw; do
    echo "=== $t"
    (cd "$build/tests" && ./$t --jobs 1) >"$out/$t.txt" 2>&1 || rc=1
    tail -n 3 "$out/$t.txt"
  done
fi
exit $rc
