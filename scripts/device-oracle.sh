#!/usr/bin/env bash
# Issue 20's claims on the GPU machine, in one call (run from the repository root with binaries built
# elsewhere and carried; the GPU machine's CPU is one more CPU for the oracle's kernels):
#   1. the CPU: model and the instruction sets the oracle's kernels need;
#   2. test_reference: every oracle kernel this CPU runs gives the portable kernel's bits;
#   3. bench_oracle with each kernel this CPU runs, on 2 threads (the CI machines' count) and on all,
#      against im2col + OpenBLAS DGEMM with OpenBLAS's kernel for the same instruction set;
#   4. test_gpu_libraries: the cuDNN and cuBLAS rows, cuBLASLt now loaded on first use;
#   5. make run's command (`convlab run --out DIR --html`) timed, its table and verdicts kept.
# usage: scripts/device-oracle.sh BIN_DIR   (BIN_DIR holds convlab, bench_oracle, test_reference and
#        test_gpu_libraries, and in BIN_DIR/lib the shared libraries the GPU machine lacks: libcjson; OUT: the log folder, default ./device-oracle-out; C1D_DEPS_PREFIX: a prefix
#        holding Criterion's env.sh, see ../shared/device)
set -uo pipefail
bin=${1:?usage: scripts/device-oracle.sh BIN_DIR}
out=${OUT:-$PWD/device-oracle-out}
mkdir -p "$out"
[ -n "${C1D_DEPS_PREFIX:-}" ] && source "$C1D_DEPS_PREFIX/env.sh"
[ -d "$bin/lib" ] && export LD_LIBRARY_PATH=$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
results=()
step() { # step NAME LOG CMD...: runs CMD, its output to LOG, and records the outcome
  local name=$1 log=$2 t0=$SECONDS
  shift 2
  "$@" >"$log" 2>&1
  local rc=$?
  results+=("$name: $([ $rc -eq 0 ] && echo passed || echo "FAILED (exit $rc)") ($((SECONDS - t0)) s)")
  return $rc
}

# 1. the machine
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  grep -m1 "model name" /proc/cpuinfo
  echo "cores: $(nproc)"
  for f in avx2 fma avx512f; do grep -qw "$f" /proc/cpuinfo && echo "has $f" || echo "no $f"; done
} | tee "$out/machine.txt"

# 2. the kernels' bits on this CPU
step test_reference "$out/test_reference.log" "$bin/test_reference" --jobs 2 --verbose
grep -E "Synthesis|SKIP" "$out/test_reference.log" | tail -4

# 3. the oracle against OpenBLAS, kernel for kernel
kernels="portable"
grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && kernels="avx2 $kernels"
grep -qw avx512f /proc/cpuinfo && kernels="avx512 $kernels"
for k in $kernels; do
  case $k in avx512) core=SkylakeX ;; avx2) core=Haswell ;; *) continue ;; esac
  for threads in 2 "$(nproc)"; do
    for shape in "--batch 1 --length 4096" "--batch 2 --length 8192"; do
      echo "=== kernel $k, OpenBLAS $core, $threads threads, $shape" >>"$out/bench_oracle.txt"
      C1D_ORACLE_KERNEL=$k OPENBLAS_CORETYPE=$core OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads \
        "$bin/bench_oracle" $shape >>"$out/bench_oracle.txt" 2>&1
    done
  done
done
grep -E "^===|oracle \(|DGEMM \(y only|ratio" "$out/bench_oracle.txt"

# 4. the library rows with cuBLASLt loaded lazily
step test_gpu_libraries "$out/test_gpu_libraries.log" "$bin/test_gpu_libraries" --jobs 1 --verbose
grep -E "Synthesis" "$out/test_gpu_libraries.log"

# 5. make run's job on the headline shape
t0=$SECONDS
step "make run's job" "$out/run.txt" "$bin/convlab" run --out /tmp/convlab-run --html
echo "make run's job: $((SECONDS - t0)) s"
cp /tmp/convlab-run/report.json "$out/run_report.json" 2>/dev/null

printf '%s\n' "${results[@]}"
